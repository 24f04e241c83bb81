/**
 * The organization delegation.e2e-spec and delegation-tokens.e2e-spec act in: a server of the
 * file's own on a manual clock with its log captured, an admin token, and the helpers both use.
 * `setUpDelegation()` starts it for the file that calls it.
 */
import type { Problem } from '@platform/contract';
import { ManualClock } from '../../src/testing';
import { type BodyOf, expectStatus, typedClient, type TypedClient } from './api';
import { discover, oidc } from './oauth';
import { startServer, type TestServer } from './server';

export type Scopes = BodyOf<TypedClient['oauthClients']['create']>['scopes'];

export let server: TestServer;
/** What the server logged. */
export const lines: string[] = [];
export let orgId: string;
export let adminToken: string;
export let admin: TypedClient;
/** The server's clock: moved forward to expire tokens and clients without sleeping. */
export const clock = new ManualClock();

/** Starts the server and the organization before the file's tests, and closes it after them. */
export function setUpDelegation() {
  beforeAll(async () => {
    server = await startServer(
      {
        LOG_LEVEL: 'info',
        // Loopback receivers stand in for customers' endpoints.
        WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
        WEBHOOK_POLL_INTERVAL: '100ms',
      },
      { logDestination: { write: (line: string) => void lines.push(line) }, clock },
    );
    orgId = (await server.createOrganization()).id;
    ({ token: adminToken } = await server.createToken(orgId, ['all']));
    admin = typedClient(server, adminToken);
  });
  afterAll(() => server?.close());
}

/** A typed client for a new token of the organization with `scopes` (and `expiresAt`). */
export async function withToken(
  scopes: Parameters<TestServer['createToken']>[1],
  options?: Parameters<TestServer['createToken']>[2],
): Promise<TypedClient> {
  return typedClient(server, (await server.createToken(orgId, scopes, options)).token);
}

/** A 403 `forbidden` problem (which every route declares) whose detail says `words`. */
export function expectForbidden(
  res: { status: number; headers: Headers; body: unknown },
  words: RegExp | string,
): void {
  if (res.status !== 403)
    throw new Error(`expected 403, got ${res.status} ${JSON.stringify(res.body)}`);
  const problem = res.body as Problem;
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(problem.code).toBe('forbidden');
  expect(problem.detail).toMatch(words);
}

/** A confidential client-credentials app the admin token registers with `scopes`. */
export async function confidentialClient(scopes: Scopes) {
  const res = await admin.oauthClients.create({
    body: { name: 'Wide App', type: 'confidential', grant_types: ['client_credentials'], scopes },
  });
  const made = expectStatus(res, 201).body;
  return { ...made, client_secret: made.client_secret! };
}

/** A client-credentials access token of the app for `scope`. */
export async function clientCredentials(
  id: string,
  secret: string,
  scope: string,
): Promise<string> {
  const config = await discover(server, id, secret);
  return (await oidc.clientCredentialsGrant(config, { scope })).access_token;
}
