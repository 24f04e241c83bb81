/**
 * The school the offboarding suites (offboarding*.e2e-spec.ts) act in: a server of the file's
 * own with an operator token and a standing admin, and the helpers they share to add, remove and
 * demote members and to sign in as one. `setUpOffboarding()` starts it for the file that calls it.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Role } from '@platform/contract';
import { PORTAL_CLIENT_ID } from '../../src/oauth/portal-client';
import { Browser, formAction } from '../../src/testing';
import { expectStatus, typedClient } from './api';
import { authorizeInBrowser, discover, oidc } from './oauth';
import type { Receiver } from './receiver';
import { startServer, type TestServer } from './server';

export const PASSWORD = 'correct horse battery staple';
export const REDIRECT_URI = 'https://app.example/callback';

export let server: TestServer;
export let orgId: string;
let operator: string;
let people = 0;
/** Receivers the file started; closed with its server. */
export const receivers: Receiver[] = [];

/** A number not used before in the file, for unique emails, student numbers and codes. */
export const nextPerson = () => ++people;

/**
 * Starts the server and the organization before the file's tests, and closes them after; `env`
 * (read when the server starts) adds to its environment.
 */
export function setUpOffboarding(env: () => Record<string, string> = () => ({})) {
  beforeAll(async () => {
    server = await startServer({
      RATE_LIMIT_ANONYMOUS: '10000',
      RATE_LIMIT_OAUTH: '10000',
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      WEBHOOK_POLL_INTERVAL: '100ms',
      ...env(),
    });
    orgId = (await server.createOrganization({ name: 'Harbour School' })).id;
    ({ token: operator } = await server.createToken(orgId, ['all']));
    // A standing admin, so removing or demoting the others is never the last admin's.
    await server.createUser(orgId, 'head@harbour.example', PASSWORD, { role: 'admin' });
  });

  afterAll(async () => {
    await Promise.all(receivers.map((r) => r.close()));
    await server.close();
  });
}

export const asOperator = () => typedClient(server, operator);

/** A new member with `role` and a personal access token of their own. */
export async function member(role: Role) {
  const email = `staff${nextPerson()}@harbour.example`;
  const created = await server.createUser(orgId, email, PASSWORD, { role });
  const id = created.id as `usr_${string}`;
  const { token } = await server.createToken(orgId, ['all'], { userId: id });
  return { id, email, token, api: typedClient(server, token) };
}

/** The operator removes the member. */
export async function remove(id: string) {
  expectStatus(await asOperator().members.delete({ params: { id } }), 200);
}

/** The operator gives the member `role`. */
export async function demote(id: string, role: Role) {
  expectStatus(await asOperator().members.update({ params: { id }, body: { role } }), 200);
}

/**
 * The portal's sign-in as its page does it; returns the portal token and the browser. For an
 * account in several organizations, `organization` is the one chosen after the password (the
 * page offering the choice is returned as `choicePage`).
 */
export async function portalSignIn(
  email: string,
  browser = new Browser(server.url),
  password = PASSWORD,
  organization?: string,
  /** `prompt` for the authorization (`login`: the portal's switch); a step before the choice. */
  options: { prompt?: string; beforeChoice?: () => Promise<void> } = {},
) {
  let choicePage: string | null = null;
  const verifier = randomBytes(32).toString('base64url');
  const redirectUri = `${server.url}/portal/callback`;
  const url = new URL('/oauth/authorize', server.url);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: PORTAL_CLIENT_ID,
    redirect_uri: redirectUri,
    scope: 'students:read webhooks:read webhooks:write tokens:read tokens:write',
    state: 'portal',
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
    ...(options.prompt && { prompt: options.prompt }),
  }).toString();
  let page = await browser.follow(url.toString());
  if (page.body.includes('Sign in to continue')) {
    page = await browser.follow(formAction(page.body, '/login'), {
      method: 'POST',
      form: { email, password },
    });
  }
  if (page.body.includes('/organization"')) {
    choicePage = page.body;
    await options.beforeChoice?.();
    page = await browser.follow(formAction(page.body, '/organization'), {
      method: 'POST',
      form: { organization: organization ?? '' },
    });
  }
  // Back at the portal's callback (this origin), with the code.
  const callback = new URL(page.url);
  const code = callback.searchParams.get('code');
  if (!code) throw new Error(`no code: ${page.status} ${page.body.slice(0, 300)}`);
  const token = await fetch(`${server.url}/oauth/token`, {
    method: 'POST',
    // The portal's page exchanges the code, so from the same browser.
    headers: {
      'Content-Type': 'application/x-www-form-urlencoded',
      ...(browser.userAgent && { 'User-Agent': browser.userAgent }),
    },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: redirectUri,
      client_id: PORTAL_CLIENT_ID,
      code_verifier: verifier,
    }),
  });
  const body = (await token.json()) as { access_token: string };
  return { token: body.access_token, browser, choicePage };
}

/** The member approves `app` on the real sign-in and consent pages; its tokens for them. */
export async function approve(
  app: { id: string; secret: string | null },
  email: string,
  scope: string,
) {
  const cfg = await discover(server, app.id, app.secret);
  const verifier = oidc.randomPKCECodeVerifier();
  const url = oidc.buildAuthorizationUrl(cfg, {
    redirect_uri: REDIRECT_URI,
    scope,
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state: 's',
  });
  const approved = await authorizeInBrowser(server, url, { email, password: PASSWORD });
  return oidc.authorizationCodeGrant(cfg, approved.callback, {
    pkceCodeVerifier: verifier,
    expectedState: 's',
  });
}

/** Whether the sign-in page asks for a password when the portal starts signing in again. */
export async function asksForPassword(browser: Browser): Promise<boolean> {
  const url = new URL('/oauth/authorize', server.url);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: PORTAL_CLIENT_ID,
    redirect_uri: `${server.url}/portal/callback`,
    scope: 'students:read',
    state: 'again',
    code_challenge: createHash('sha256').update('v'.repeat(43)).digest('base64url'),
    code_challenge_method: 'S256',
  }).toString();
  const page = await browser.follow(url.toString());
  return page.status === 200 && page.body.includes('Sign in to continue');
}
