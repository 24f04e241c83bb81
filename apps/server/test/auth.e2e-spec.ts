import { PersonalAccessToken } from '../src/auth/personal-access-token.entity';
import { generatePersonalAccessToken } from '../src/auth/token-format';
import { ManualClock } from '../src/testing';
import { expectStatus, typedClient, type TypedClient } from './support/api';
import { startServer, type TestServer } from './support/server';

type StudentList = Awaited<ReturnType<TypedClient['students']['list']>>;

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

  /** `GET /v1/students` with `token` as the bearer, if any. */
  const listStudents = (bearer?: string) => typedClient(server, bearer).students.list();

  function expectUnauthorized(res: StudentList, detail: RegExp) {
    const refused = expectStatus(res, 401);
    expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(refused.body.code).toBe('unauthorized');
    expect(refused.body.detail).toMatch(detail);
    expect(refused.headers.get('www-authenticate')).toMatch(
      /^Bearer realm="platform", error="invalid_token"/,
    );
  }

  it('accepts a valid token with the right scope', async () => {
    const res = await listStudents(token);
    expect(res.status).toBe(200);
  });

  it('refuses a request without an Authorization header', async () => {
    expectUnauthorized(await listStudents(), /Authorization: Bearer/);
  });

  it('refuses a non-bearer scheme and an empty bearer', async () => {
    const api = typedClient(server);
    expectUnauthorized(
      await api.students.list({
        extraHeaders: { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` },
      }),
      /malformed/,
    );
    expectUnauthorized(
      await api.students.list({ extraHeaders: { authorization: 'Bearer' } }),
      /malformed/,
    );
  });

  it('refuses a token whose checksum does not match (a typo)', async () => {
    const last = token.at(-1) === 'a' ? 'b' : 'a';
    expectUnauthorized(await listStudents(`${token.slice(0, -1)}${last}`), /malformed/);
  });

  it('refuses a well-formed token that does not exist', async () => {
    expectUnauthorized(await listStudents(generatePersonalAccessToken()), /not recognised/);
  });

  it('refuses a token once its expiry has passed on the server clock', async () => {
    const { token: shortLived } = await server.createToken(orgId, ['students:read'], {
      expiresAt: new Date(clock.nowMs() + 3_600_000),
    });
    expect((await listStudents(shortLived)).status).toBe(200);
    clock.advance(3_600_000);
    expectUnauthorized(await listStudents(shortLived), /expired/);
  });

  it('refuses a revoked token on the very next request', async () => {
    const { token: doomed, id } = await server.createToken(orgId, ['students:read']);
    expect((await listStudents(doomed)).status).toBe(200);
    await server.revokeToken(id);
    expectUnauthorized(await listStudents(doomed), /revoked/);
  });

  it('answers 403 insufficient_scope, naming the scope, for a token without it', async () => {
    const { token: writeOnly } = await server.createToken(orgId, [
      'students:write',
      'courses:read',
    ]);
    const res = expectStatus(await listStudents(writeOnly), 403);
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

    expect((await listStudents(fresh)).status).toBe(200);
    const after = await server.dataSource.manager.findOneByOrFail(PersonalAccessToken, { id });
    expect(after.lastUsedAt).toBeInstanceOf(Date);
    expect(Math.abs(after.lastUsedAt!.getTime() - clock.nowMs())).toBeLessThan(10_000);
  });
});
