/**
 * A scripted browser for the authorization code flow: follows the server's redirects, keeps its
 * cookies, and fills in the login and consent pages the way a user would. Used by the server's
 * OAuth tests and the SDK's refresh tests.
 */
export interface BrowserResponse {
  status: number;
  headers: Headers;
  body: string;
  /** The URL that answered. */
  url: string;
}

type BrowserRequest = {
  method?: string;
  form?: Record<string, string>;
  /** Extra request headers (a form post claiming another `Origin`). */
  headers?: Record<string, string>;
};

/**
 * A minimal browser: keeps cookies per name, follows redirects by hand so each hop can be
 * checked, and submits the login and consent forms the way a user would.
 */
export class Browser {
  private readonly cookies = new Map<string, string>();
  /** Every URL visited, in order. */
  readonly visited: string[] = [];

  /** `userAgent`: sent on every request, as a real browser's is ("my sessions" shows it). */
  constructor(
    private readonly origin: string,
    readonly userAgent?: string,
  ) {}

  async request(url: string, init: BrowserRequest = {}): Promise<BrowserResponse> {
    const absolute = new URL(url, this.origin).toString();
    this.visited.push(absolute);
    const res = await fetch(absolute, {
      method: init.method ?? 'GET',
      redirect: 'manual',
      headers: {
        ...(this.cookies.size && {
          cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
        }),
        ...(init.form && { 'content-type': 'application/x-www-form-urlencoded' }),
        ...(this.userAgent && { 'user-agent': this.userAgent }),
        ...init.headers,
      },
      ...(init.form && { body: new URLSearchParams(init.form).toString() }),
    });
    for (const line of res.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      if (/expires=Thu, 01 Jan 1970/i.test(line) || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return { status: res.status, headers: res.headers, body: await res.text(), url: absolute };
  }

  /**
   * Follows redirects on this server; stops at the first page (2xx/4xx) or at a redirect that
   * leaves for another origin (the client's redirect URI), and returns that last response.
   */
  async follow(url: string, init: BrowserRequest = {}): Promise<BrowserResponse> {
    let res = await this.request(url, init);
    for (let hops = 0; hops < 10; hops++) {
      const location = res.headers.get('location');
      if (res.status < 300 || res.status >= 400 || !location) return res;
      const next = new URL(location, res.url);
      if (next.origin !== this.origin) return res;
      res = await this.request(next.toString());
    }
    throw new Error('too many redirects');
  }
}

/** The action of the form on an HTML page whose action ends with `suffix`. */
export function formAction(html: string, suffix: string): string {
  const match = [...html.matchAll(/<form method="post" action="([^"]+)"/g)]
    .map((m) => m[1]!)
    .find((action) => action.endsWith(suffix));
  if (!match) throw new Error(`no form posting to …${suffix} in:\n${html}`);
  return match;
}

export interface AuthorizeResult {
  /** Where the server finally sent the browser (the client's redirect URI with code or error). */
  callback: URL;
  browser: Browser;
  loginPage: string;
  consentPage: string;
}

/** Drives the authorization code flow through the real login and consent pages. */
export async function authorizeInBrowser(
  /** The test server (`TestServer`), of which only the URL is needed. */
  server: { url: string },
  authorizationUrl: URL,
  user: { email: string; password: string },
  decision: 'approve' | 'deny' = 'approve',
): Promise<AuthorizeResult> {
  const browser = new Browser(server.url);
  const login = await browser.follow(authorizationUrl.toString());
  if (login.status !== 200) throw new Error(`login page: ${login.status} ${login.body}`);
  const consent = await browser.follow(formAction(login.body, '/login'), {
    method: 'POST',
    form: { email: user.email, password: user.password },
  });
  if (consent.status !== 200) throw new Error(`consent page: ${consent.status} ${consent.body}`);
  const done = await browser.follow(formAction(consent.body, '/consent'), {
    method: 'POST',
    form: { decision },
  });
  const location = done.headers.get('location');
  if (!location) throw new Error(`no redirect to the client: ${done.status} ${done.body}`);
  return { callback: new URL(location), browser, loginPage: login.body, consentPage: consent.body };
}
