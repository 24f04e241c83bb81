/**
 * The token cache (src/auth/token-cache.ts) answers most requests without the token lookup; the
 * database invalidates it on every change that could alter a lookup, whoever makes the change.
 * Each test first uses a token, so its lookup is cached, then changes something and expects the
 * very next request to see the change: through the API, the CLI (its own connection), raw SQL,
 * and on a second server sharing the database.
 */
import { PersonalAccessToken } from '../src/auth/personal-access-token.entity';
import { ManualClock } from '../src/testing';
import { expectStatus, typedClient } from './support/api';
import { platform } from './support/cli';
import { discover, oidc } from './support/oauth';
import { startServer, type TestServer } from './support/server';

const PASSWORD = 'correct horse battery staple';
const HOUR = 3_600_000;

/** Webhooks are not what these tests look at, and two servers share one database below. */
const ENV = { WEBHOOK_DISPATCHER: 'false', RATE_LIMIT_ANONYMOUS: '10000' };

let server: TestServer;
/** A second instance on the same database, as in the scale-out deployment. */
let other: TestServer;
/** Both servers' clock, moved forward to expire tokens without sleeping. */
const clock = new ManualClock();
let orgId: string;
/** An operator's token (no member): sets things up. */
let operator: string;
let people = 0;

beforeAll(async () => {
  server = await startServer(ENV, { clock });
  // Behind one public origin, as the scale-out deployment is: OAuth tokens name it as audience.
  other = await startServer(
    { ...ENV, PUBLIC_URL: server.url },
    { clock, databaseUrl: server.databaseUrl },
  );
  orgId = (await server.createOrganization({ name: 'Cache School' })).id;
  ({ token: operator } = await server.createToken(orgId, ['all']));
  // The standing admin, so the members below can be demoted or removed.
  await server.createUser(orgId, 'head@cache.example', PASSWORD);
});

afterAll(async () => {
  await other?.close();
  await server?.close();
});

const api = (token: string, on: TestServer = server) => typedClient(on, token);

/** `GET /v1/students` with `token`, answered 200 (the lookup is then cached on `on`). */
async function expectAccepted(token: string, on: TestServer = server) {
  expect((await api(token, on).students.list()).status).toBe(200);
}

async function expectRefused(token: string, detail: RegExp, on: TestServer = server) {
  const refused = expectStatus(await api(token, on).students.list(), 401);
  expect(refused.body.detail).toMatch(detail);
}

async function patWith(scopes: Parameters<TestServer['createToken']>[1], userId?: string) {
  return server.createToken(orgId, scopes, userId ? { userId } : {});
}

async function member(role: 'admin' | 'developer' | 'viewer') {
  const email = `person${++people}@cache.example`;
  const { id } = await server.createUser(orgId, email, PASSWORD, { role });
  const { token } = await patWith(['students:read', 'students:write'], id);
  return { id, token };
}

// First: oidc-provider stamps `exp` by the system clock, so these run before the clock is moved.
describe('OAuth access tokens', () => {
  async function clientCredentials(scope = 'students:read') {
    const client = await server.createOAuthClient(orgId, {
      type: 'confidential',
      grant_types: ['client_credentials'],
    });
    const config = await discover(server, client.id, client.client_secret);
    const tokens = await oidc.clientCredentialsGrant(config, { scope });
    return { client, config, token: tokens.access_token, expiresIn: tokens.expires_in! };
  }

  it('revoked (RFC 7009) on one server: refused on the very next request on both', async () => {
    const { config, token } = await clientCredentials();
    await expectAccepted(token);
    await expectAccepted(token, other);
    await oidc.tokenRevocation(config, token);
    await expectRefused(token, /not recognised/);
    await expectRefused(token, /not recognised/, other);
  });

  it('refused on the very next request once its client is deleted', async () => {
    const { client, token } = await clientCredentials();
    await expectAccepted(token);
    const deleted = await api(operator).oauthClients.delete({ params: { id: client.id } });
    expect(deleted.status).toBe(200);
    await expectRefused(token, /not recognised/);
  });

  it('expired while cached: refused once the clock passes its expiry', async () => {
    const { token, expiresIn } = await clientCredentials();
    await expectAccepted(token);
    await expectAccepted(token);
    clock.advance(expiresIn * 1000 + 1000);
    await expectRefused(token, /expired/);
  });
});

describe('personal access tokens', () => {
  it('revoked through the API: refused on the very next request', async () => {
    const { token, id } = await patWith(['students:read']);
    await expectAccepted(token);
    await expectAccepted(token);
    const revoked = await api(operator).personalAccessTokens.delete({ params: { id } });
    expect(revoked.status).toBe(200);
    await expectRefused(token, /revoked/);
  });

  it('revoked with the CLI (its own connection): refused on the very next request', async () => {
    const { token, id } = await patWith(['students:read']);
    await expectAccepted(token);
    const cli = await platform(server.databaseUrl, 'tokens:revoke', '--id', id);
    expect(cli.code).toBe(0);
    await expectRefused(token, /revoked/);
  });

  it('revoked on one server: refused on the very next request on the other', async () => {
    const { token, id } = await patWith(['students:read']);
    await expectAccepted(token, other);
    await expectAccepted(token, server);
    expect((await api(operator).personalAccessTokens.delete({ params: { id } })).status).toBe(200);
    await expectRefused(token, /revoked/, other);
  });

  it('scopes changed by raw SQL: the next request has the new scopes', async () => {
    const { token, id } = await patWith(['students:read']);
    await expectAccepted(token);
    await server.dataSource
      .createQueryBuilder()
      .update(PersonalAccessToken)
      .set({ scopes: 'courses:read' })
      .where({ id })
      .execute();
    const res = expectStatus(await api(token).students.list(), 403);
    expect(res.body.code).toBe('insufficient_scope');
    expect((await api(token).courses.list()).status).toBe(200);
  });

  it('expired while cached: refused once the clock passes its expiry', async () => {
    const { token } = await server.createToken(orgId, ['students:read'], {
      expiresAt: new Date(clock.nowMs() + HOUR),
    });
    await expectAccepted(token);
    await expectAccepted(token);
    clock.advance(HOUR);
    await expectRefused(token, /expired/);
  });

  it('a cached token still records when it was last used, at most once a minute', async () => {
    const { token, id } = await patWith(['students:read']);
    const lastUsed = async () =>
      (await server.dataSource.manager.findOneByOrFail(PersonalAccessToken, { id })).lastUsedAt!;
    await expectAccepted(token);
    const first = await lastUsed();
    expect(Math.abs(first.getTime() - clock.nowMs())).toBeLessThan(10_000);
    clock.advance(30_000);
    await expectAccepted(token);
    expect(await lastUsed()).toEqual(first);
    clock.advance(31_000);
    await expectAccepted(token);
    const later = await lastUsed();
    expect(later.getTime() - first.getTime()).toBeGreaterThanOrEqual(61_000);
    // The touch changes nothing a lookup returns: the token keeps working.
    await expectAccepted(token);
  });
});

describe('members and organizations', () => {
  it("a member demoted on one server: the other server applies the new role's scopes on the next request", async () => {
    const dev = await member('developer');
    const body = () => ({
      student_number: `C-${++people}`,
      first_name: 'Ada',
      last_name: 'Lovelace',
    });
    expect((await api(dev.token, other).students.create({ body: body() })).status).toBe(201);
    const demoted = await api(operator).members.update({
      params: { id: dev.id },
      body: { role: 'viewer' },
    });
    expect(expectStatus(demoted, 200).body.role).toBe('viewer');
    const res = expectStatus(await api(dev.token, other).students.create({ body: body() }), 403);
    expect(res.body.code).toBe('insufficient_scope');
  });

  it("a removed member's token is refused on the very next request", async () => {
    const leaver = await member('developer');
    await expectAccepted(leaver.token);
    await expectAccepted(leaver.token, other);
    expect((await api(operator).members.delete({ params: { id: leaver.id } })).status).toBe(200);
    await expectRefused(leaver.token, /revoked/);
    await expectRefused(leaver.token, /revoked/, other);
  });

  it("an organization's new rate limit (set with the CLI) applies on the next request", async () => {
    const { token } = await patWith(['students:read']);
    const before = await api(token).students.list();
    expect(before.headers.get('x-ratelimit-limit')).toBe('600');
    const cli = await platform(
      server.databaseUrl,
      'orgs:update',
      '--id',
      orgId,
      '--rate-limit',
      '450',
    );
    expect(cli.code).toBe(0);
    const after = await api(token).students.list();
    expect(after.status).toBe(200);
    expect(after.headers.get('x-ratelimit-limit')).toBe('450');
  });
});
