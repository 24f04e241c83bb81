/**
 * Riverside School, the organization members.e2e-spec and invitations.e2e-spec act in: a server
 * of the file's own, an operator token, a standing admin and a confidential OAuth app, and the
 * members each test makes. `setUpRiverside()` starts it for the file that calls it.
 */
import type { Role } from '@platform/contract';
import { expectStatus, typedClient } from './api';
import { authorizeInBrowser, discover, oidc } from './oauth';
import { startServer, type TestServer } from './server';

export const PASSWORD = 'correct horse battery staple';
export const REDIRECT_URI = 'https://portal.example/callback';

export let server: TestServer;
export let orgId: string;
/** An operator's token (no member): sets things up. */
export let operator: string;
let appClient: { id: string; client_secret: string | null };
/** How many people this file has made so far. */
export let people = 0;

/** A number no other person of this file's organization has, for unique emails. */
export function nextPerson(): number {
  return ++people;
}

/** Starts the server and the school before the file's tests, and closes it after them. */
export function setUpRiverside() {
  beforeAll(async () => {
    // No deliveries are needed: an endpoint only has to be registered (on a loopback address).
    server = await startServer({
      RATE_LIMIT_ANONYMOUS: '10000',
      WEBHOOK_DISPATCHER: 'false',
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    });
    orgId = (await server.createOrganization({ name: 'Riverside School' })).id;
    ({ token: operator } = await server.createToken(orgId, ['all']));
    // The school's standing admin, so demoting or removing the members below is never the last admin.
    await server.createUser(orgId, 'head@riverside.example', PASSWORD);
    appClient = await server.createOAuthClient(orgId, {
      type: 'confidential',
      name: 'School Portal',
      redirect_uris: [REDIRECT_URI],
      scopes: ['all'],
    });
  });

  afterAll(() => server?.close());
}

/** A new member with `role` and a personal access token they own holding `scopes`. */
export async function member(
  role: Role,
  scopes: Parameters<TestServer['createToken']>[1] = ['all'],
) {
  const email = `person${nextPerson()}@riverside.example`;
  const { id } = await server.createUser(orgId, email, PASSWORD, { role });
  const { token } = await server.createToken(orgId, scopes, { userId: id });
  return { id, email, token, api: typedClient(server, token) };
}

/** An OAuth access token the member approved through the real sign-in and consent pages. */
export async function oauthToken(
  user: { email: string; password?: string },
  scope: string,
): Promise<{ accessToken: string; consentPage: string }> {
  const cfg = await discover(server, appClient.id, appClient.client_secret);
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const url = oidc.buildAuthorizationUrl(cfg, {
    redirect_uri: REDIRECT_URI,
    scope,
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
  });
  const result = await authorizeInBrowser(server, url, {
    email: user.email,
    password: user.password ?? PASSWORD,
  });
  const tokens = await oidc.authorizationCodeGrant(cfg, result.callback, {
    pkceCodeVerifier: verifier,
    expectedState: state,
  });
  return { accessToken: tokens.access_token, consentPage: result.consentPage };
}

export const asOperator = () => typedClient(server, operator);

/** What `GET /v1/token` says of `token`. */
export async function tokenInfo(token: string) {
  return expectStatus(await typedClient(server, token).token.retrieve(), 200).body;
}
