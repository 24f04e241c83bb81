import { PersonalAccessToken } from '../src/auth/personal-access-token.entity';
import { generatePersonalAccessToken } from '../src/auth/token-format';
import { ManualClock } from '../src/testing';
import { type ApiResponse, call, startServer, type TestServer } from './support/server';

describe('authentication and scopes', () => {
  let server: TestServer;
  let orgId: string;
  let token: string;
  /** The server's clock, moved forward to expire a token without sleeping. */
  const clock = new ManualClock();

  beforeAll(async () => {
    server = await startServer({}, { clock });
    orgId = (await server.createOrganization()).id;
    ({ token } = await server.createToken(orgId, ['students:read']));
  });
  afterAll(() => server.close());

  function expectUnauthorized(res: ApiResponse, detail: RegExp) {
    expect(res.status).toBe(401);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(res.body.code).toBe('unauthorized');
    expect(res.body.detail).toMatch(detail);
    expect(res.headers.get('www-authenticate')).toMatch(
      /^Bearer realm="platform", error="invalid_token"/,
    );
  }

  it('accepts a valid token with the right scope', async () => {
    const res = await call(server, '/v1/students', { token });
    expect(res.status).toBe(200);
  });

  it('refuses a request without an Authorization header', async () => {
    expectUnauthorized(await call(server, '/v1/students'), /Authorization: Bearer/);
  });

  it('refuses a non-bearer scheme and an empty bearer', async () => {
    expectUnauthorized(
      await call(server, '/v1/students', {
        headers: { Authorization: `Basic ${Buffer.from('a:b').toString('base64')}` },
      }),
      /malformed/,
    );
    expectUnauthorized(
      await call(server, '/v1/students', { headers: { Authorization: 'Bearer' } }),
      /malformed/,
    );
  });

  it('refuses a token whose checksum does not match (a typo)', async () => {
    const last = token.at(-1) === 'a' ? 'b' : 'a';
    expectUnauthorized(
      await call(server, '/v1/students', { token: `${token.slice(0, -1)}${last}` }),
      /malformed/,
    );
  });

  it('refuses a well-formed token that does not exist', async () => {
    expectUnauthorized(
      await call(server, '/v1/students', { token: generatePersonalAccessToken() }),
      /not recognised/,
    );
  });

  it('refuses a token once its expiry has passed on the server clock', async () => {
    const { token: shortLived } = await server.createToken(orgId, ['students:read'], {
      expiresAt: new Date(clock.nowMs() + 3_600_000),
    });
    expect((await call(server, '/v1/students', { token: shortLived })).status).toBe(200);
    clock.advance(3_600_000);
    expectUnauthorized(await call(server, '/v1/students', { token: shortLived }), /expired/);
  });

  it('refuses a revoked token on the very next request', async () => {
    const { token: doomed, id } = await server.createToken(orgId, ['students:read']);
    expect((await call(server, '/v1/students', { token: doomed })).status).toBe(200);
    await server.revokeToken(id);
    expectUnauthorized(await call(server, '/v1/students', { token: doomed }), /revoked/);
  });

  it('answers 403 insufficient_scope, naming the scope, for a token without it', async () => {
    const { token: writeOnly } = await server.createToken(orgId, [
      'students:write',
      'courses:read',
    ]);
    const res = await call(server, '/v1/students', { token: writeOnly });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('insufficient_scope');
    expect(res.body.detail).toContain("'students:read'");
    expect(res.headers.get('www-authenticate')).toBe(
      'Bearer realm="platform", error="insufficient_scope", scope="students:read"',
    );
  });

  it('stores only a hash of the token, and records when it was last used', async () => {
    const { token: fresh, id } = await server.createToken(orgId, ['students:read']);
    const before = await server.dataSource.manager.findOneByOrFail(PersonalAccessToken, { id });
    expect(before.lastUsedAt).toBeNull();
    expect(JSON.stringify(before)).not.toContain(fresh.slice(4));
    expect(before.tokenHash).toMatch(/^[0-9a-f]{64}$/);

    expect((await call(server, '/v1/students', { token: fresh })).status).toBe(200);
    const after = await server.dataSource.manager.findOneByOrFail(PersonalAccessToken, { id });
    expect(after.lastUsedAt).toBeInstanceOf(Date);
    expect(Math.abs(after.lastUsedAt!.getTime() - clock.nowMs())).toBeLessThan(10_000);
  });
});
