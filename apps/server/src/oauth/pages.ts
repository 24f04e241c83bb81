/**
 * The login and consent pages: plain server-rendered HTML with labelled fields, one heading per
 * page and no script, so they work with a screen reader, a keyboard, or scripts turned off.
 * Everything interpolated goes through `escapeHtml`.
 */
const HTML_ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (ch) => HTML_ESCAPES[ch]!);
}

/**
 * The portal's look (apps/portal/src/styles.css: its colours, buttons and focus ring), so that
 * signing in, consenting and accepting an invitation feel like one product with the portal.
 * Colours meet WCAG AA contrast on white.
 */
const STYLE = `
:root{--text:#1b1f24;--muted:#4a5560;--accent:#0b5cad;--accent-dark:#084a8c;--danger:#a4161a;--border:#c3cad2;--surface:#f5f7f9}
*{box-sizing:border-box}
body{margin:0;font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;line-height:1.5;color:var(--text);background:#fff;overflow-wrap:break-word}
header.top{padding:.75rem clamp(1rem,4vw,2rem);border-bottom:1px solid var(--border);background:var(--surface);font-weight:700}
main{max-width:32rem;margin:0 auto;padding:2rem clamp(1rem,4vw,2rem) 3rem}
h1{font-size:1.6rem;margin:0 0 .75rem}
label{display:block;margin-top:1rem;font-weight:600}
input{display:block;width:100%;padding:.5rem;font:inherit;border:1px solid var(--border);border-radius:4px}
button{font:inherit;margin-top:1.25rem;margin-right:.5rem;padding:.45rem 1rem;border:1px solid var(--accent);border-radius:4px;background:#fff;color:var(--accent-dark);cursor:pointer}
button:hover{background:#e8f1fb}
button.primary{background:var(--accent);color:#fff}
button.primary:hover{background:var(--accent-dark)}
a{color:var(--accent-dark)}
:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
.error{color:var(--danger);border-left:4px solid var(--danger);padding-left:.75rem}
code{background:var(--surface);padding:0 .25rem;border-radius:3px}`;

export function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · Platform</title>
<style>${STYLE}</style>
</head>
<body>
<header class="top">Platform</header>
<main>
${body}
</main>
</body>
</html>`;
}

/** Who the app acts for and where the browser goes afterwards, so nobody signs in blind. */
function destination(input: {
  clientName: string;
  organizationName?: string | null;
  redirectUri: string;
}): string {
  const organization = input.organizationName
    ? ` It acts for <strong>${escapeHtml(input.organizationName)}</strong>.`
    : '';
  return `<p>${escapeHtml(input.clientName)} asks for access.${organization} Afterwards you go back to <code>${escapeHtml(input.redirectUri)}</code>.</p>`;
}

export function loginPage(input: {
  uid: string;
  clientName: string;
  organizationName?: string | null;
  redirectUri: string;
  email?: string;
  error?: string;
  /** Whether to offer a reset by email (the server sends mail). */
  passwordReset?: boolean;
}) {
  return page(
    'Sign in',
    `<h1>Sign in to continue to ${escapeHtml(input.clientName)}</h1>
${destination(input)}
${input.error ? `<p class="error" role="alert">${escapeHtml(input.error)}</p>` : ''}
<form method="post" action="/oauth/interaction/${encodeURIComponent(input.uid)}/login">
<label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="username" required value="${escapeHtml(input.email ?? '')}">
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit" class="primary">Sign in</button>
</form>
${input.passwordReset ? '<p><a href="/password-reset">Forgot your password?</a></p>' : ''}
<form method="post" action="/oauth/interaction/${encodeURIComponent(input.uid)}/consent">
<input type="hidden" name="decision" value="deny">
<button type="submit">Cancel</button>
</form>`,
  );
}

/** After the password, for an account that is a member of several organizations. */
export function organizationChoicePage(input: {
  uid: string;
  clientName: string;
  organizations: readonly { id: string; name: string; role: string }[];
}) {
  const options = input.organizations
    .map(
      (o, i) =>
        `<p><input type="radio" id="org-${i}" name="organization" value="${escapeHtml(o.id)}"${i === 0 ? ' checked' : ''}> <label for="org-${i}">${escapeHtml(o.name)} (${escapeHtml(o.role)})</label></p>`,
    )
    .join('\n');
  return page(
    'Choose an organization',
    `<h1>Continue to ${escapeHtml(input.clientName)} as a member of</h1>
<form method="post" action="/oauth/interaction/${encodeURIComponent(input.uid)}/organization">
<fieldset><legend>Your organizations</legend>
${options}
</fieldset>
<button type="submit" class="primary">Continue</button>
</form>`,
  );
}

export function consentPage(input: {
  uid: string;
  clientName: string;
  organizationName?: string | null;
  redirectUri: string;
  email: string;
  scopes: { scope: string; description: string }[];
  /** Requested scopes the member's role does not allow: never granted, listed so nobody wonders. */
  withheld?: string[];
  role?: string;
}) {
  const items = input.scopes
    .map((s) => `<li><code>${escapeHtml(s.scope)}</code>: ${escapeHtml(s.description)}</li>`)
    .join('\n');
  const target = input.organizationName ? escapeHtml(input.organizationName) : 'your organization';
  return page(
    'Authorize access',
    `<h1>Allow ${escapeHtml(input.clientName)} to access ${target}?</h1>
<p>Signed in as <strong>${escapeHtml(input.email)}</strong>.</p>
<form method="post" action="/oauth/interaction/${encodeURIComponent(input.uid)}/switch">
<button type="submit">Not you? Sign in as someone else</button>
</form>
<p>${escapeHtml(input.clientName)} asks to:</p>
<ul>
${items || '<li>identify you (no access to data)</li>'}
</ul>
${
  input.withheld?.length
    ? `<p>Not granted, because your role (${escapeHtml(input.role ?? '')}) does not allow it: ${input.withheld.map((s) => `<code>${escapeHtml(s)}</code>`).join(', ')}.</p>`
    : ''
}
<p>Allowing sends you back to <code>${escapeHtml(input.redirectUri)}</code>.</p>
<form method="post" action="/oauth/interaction/${encodeURIComponent(input.uid)}/consent">
<button type="submit" class="primary" name="decision" value="approve">Allow</button>
<button type="submit" name="decision" value="deny">Deny</button>
</form>`,
  );
}

const ACTIONS = { read: 'read', write: 'create, change and delete' } as const;

/**
 * Scopes whose plain "verb resource" reading would understate what they grant. A webhook
 * endpoint is a standing feed of the data of the records it subscribes to, so the page says so.
 */
const SCOPE_DESCRIPTIONS: Readonly<Record<string, string>> = {
  'webhooks:write':
    'create, change and delete webhook endpoints: have the records it may read sent, as they change, to an address it chooses, until you revoke its access',
};

/** `students:read` → "read students". */
export function describeScope(scope: string): string {
  const special = SCOPE_DESCRIPTIONS[scope];
  if (special) return special;
  const [resource = scope, access] = scope.split(':');
  const verb = ACTIONS[access as keyof typeof ACTIONS] ?? access ?? '';
  return `${verb} ${resource.replace(/_/g, ' ')}`;
}

/** The sign-out pages' policy: their own styles, and the one form posting to this origin. */
export const SIGN_OUT_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/**
 * RP-initiated logout's confirmation (oidc-provider's `logoutSource`): `form` is its own form,
 * which carries the anti-forgery token; the buttons submit it. One click, so that another site
 * cannot sign a member out by sending their browser here.
 */
export function signOutPage(form: string): string {
  return page(
    'Sign out',
    `<h1>Sign out of Platform</h1>
<p>You will need your password to sign in again on this browser.</p>
${form}
<button class="primary" type="submit" form="op.logoutForm" name="logout" value="yes" autofocus>Sign out</button>`,
  );
}

/** Shown when signing out had no app to return to. */
export function signedOutPage(): string {
  return page('Signed out', '<h1>You are signed out</h1><p>You can close this window.</p>');
}
