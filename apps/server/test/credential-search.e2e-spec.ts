/**
 * `q` and the filters on the lists of an organization's credentials and people: personal access
 * tokens (`name`), members (`name`, `email`), OAuth clients (`name`, filter `type`), webhook
 * endpoints (`url`, `description`, filter `enabled`) and invitations (`email`, filter `role`).
 * Each is a case-insensitive substring search that takes `%` and `_` literally, served by the
 * same trigram index as the domain's lists (3+ characters) or a scan (1–2), and sees only the
 * caller's organization. Runs on SQLite, and on PostgreSQL with TEST_DATABASE_URL.
 */
import { REASONS } from '../src/webhooks/migrations/1766700000000-member-removed';
import { rebuildEndpointsSqlite } from '../src/webhooks/migrations/rebuild-endpoints';
import {
  DATABASE_KIND,
  problemOf,
  rawCall,
  rawClient,
  startServer,
  type TestServer,
} from './support/server';

const PASSWORD = 'correct horse battery staple';

let server: TestServer;
let orgId: string;
let token: string;
let otherToken: string;

type Listed = { data: Record<string, unknown>[]; meta: { total: number } };

/** The `field` values of a successful list at `path` with `query`, in the list's order. */
async function listed(path: string, query: Record<string, string>, field: string, t = token) {
  const res = await rawCall<Listed>(server, `${path}?${new URLSearchParams(query).toString()}`, {
    token: t,
  });
  expect(res.status).toBe(200);
  expect(res.body.meta.total).toBe(res.body.data.length);
  return res.body.data.map((row) => row[field]).sort();
}

beforeAll(async () => {
  server = await startServer({ WEBHOOK_DISPATCHER: 'false', WEBHOOK_ALLOW_PRIVATE_URLS: 'true' });
  orgId = (await server.createOrganization({ name: 'Riverside School' })).id;
  ({ token } = await server.createToken(orgId, ['all'], { name: 'operator' }));
  const api = rawClient(server, token);

  for (const name of ['Deploy 100% prod', 'Deploy 1000 prod', 'ci_bot', 'ciXbot', 'Nightly SIS']) {
    await server.createToken(orgId, ['students:read'], { name });
  }
  const people = [
    { email: 'ana_maria@riverside.example', name: 'Ana María Pérez' },
    { email: 'anaxmaria@riverside.example', name: 'Bo Li' },
    { email: 'head@riverside.example', name: null },
  ];
  for (const person of people) {
    const { id } = await server.createUser(orgId, person.email, PASSWORD, { role: 'developer' });
    if (person.name)
      expect((await api.patch(`/v1/members/${id}`, { name: person.name })).status).toBe(200);
  }
  await server.createOAuthClient(orgId, {
    type: 'confidential',
    name: 'Gradebook Sync',
    redirect_uris: ['https://app.example/cb'],
  });
  await server.createOAuthClient(orgId, {
    type: 'public',
    name: 'Gradebook Mobile',
    redirect_uris: ['https://app.example/cb'],
  });
  await server.createOAuthClient(orgId, {
    type: 'public',
    name: 'Timetable',
    redirect_uris: ['https://app.example/cb'],
  });
  const endpoints = [
    { url: 'http://127.0.0.1:9/sis_sync', description: 'Nightly 50% sample' },
    { url: 'http://127.0.0.1:9/sisXsync', description: 'Nightly 500 sample' },
    { url: 'http://127.0.0.1:9/audit', description: null },
  ];
  for (const endpoint of endpoints) {
    const res = await api.post('/v1/webhook_endpoints', { ...endpoint, events: ['*'] });
    expect(res.status).toBe(201);
  }
  for (const [email, role] of [
    ['new_teacher@riverside.example', 'developer'],
    ['newxteacher@riverside.example', 'viewer'],
    ['parent@elsewhere.example', 'viewer'],
  ]) {
    expect((await api.post('/v1/invitations', { email, role })).status).toBe(201);
  }

  // Another organization with the same names, which no search of ours may return.
  const other = await server.createOrganization({ name: 'Other School' });
  ({ token: otherToken } = await server.createToken(other.id, ['all'], {
    name: 'Deploy 100% prod',
  }));
  await server.createUser(other.id, 'ana_maria@other.example', PASSWORD);
  await server.createOAuthClient(other.id, {
    type: 'public',
    name: 'Gradebook Sync',
    redirect_uris: ['https://app.example/cb'],
  });
  const theirs = rawClient(server, otherToken);
  await theirs.post('/v1/webhook_endpoints', {
    url: 'http://127.0.0.1:9/sis_sync',
    description: 'Nightly 50% sample',
    events: ['*'],
  });
  await theirs.post('/v1/invitations', { email: 'new_teacher@other.example', role: 'viewer' });
}, 60_000);

afterAll(() => server?.close());

describe('GET /v1/personal_access_tokens?q=', () => {
  const names = (q: string, t = token) => listed('/v1/personal_access_tokens', { q }, 'name', t);

  it('finds a case-insensitive substring of the name', async () => {
    expect(await names('deploy')).toEqual(['Deploy 100% prod', 'Deploy 1000 prod']);
    expect(await names('NIGHTLY sis')).toEqual(['Nightly SIS']);
    expect(await names('nothing like it')).toEqual([]);
  });

  it('takes % and _ literally, at every length of q', async () => {
    expect(await names('100%')).toEqual(['Deploy 100% prod']);
    expect(await names('%')).toEqual(['Deploy 100% prod']);
    expect(await names('i_')).toEqual(['ci_bot']);
    expect(await names('ci_bot')).toEqual(['ci_bot']);
  });

  it("never finds another organization's tokens", async () => {
    expect(await names('deploy', otherToken)).toEqual(['Deploy 100% prod']);
    expect(await names('ci_', otherToken)).toEqual([]);
  });

  it('refuses an empty q, and any parameter the list does not declare, naming it', async () => {
    const empty = problemOf(await rawCall(server, '/v1/personal_access_tokens?q=', { token }));
    expect(empty.status).toBe(400);
    expect(JSON.stringify(empty.errors)).toContain('q');
    const unknown = problemOf(
      await rawCall(server, '/v1/personal_access_tokens?search=ci', { token }),
    );
    expect(unknown.status).toBe(400);
    expect(JSON.stringify(unknown)).toContain('search');
  });
});

describe('GET /v1/members?q=', () => {
  const emails = (query: Record<string, string>, t = token) =>
    listed('/v1/members', query, 'email', t);

  it('searches the name and the email, case-insensitively beyond ASCII', async () => {
    expect(await emails({ q: 'MARÍA' })).toEqual(['ana_maria@riverside.example']);
    expect(await emails({ q: 'bo li' })).toEqual(['anaxmaria@riverside.example']);
    expect(await emails({ q: 'head@' })).toEqual(['head@riverside.example']);
  });

  it('takes _ literally and combines with the role filter', async () => {
    expect(await emails({ q: 'a_m' })).toEqual(['ana_maria@riverside.example']);
    expect(await emails({ q: 'ana_maria' })).toEqual(['ana_maria@riverside.example']);
    expect(await emails({ q: 'riverside', role: 'developer' })).toEqual([
      'ana_maria@riverside.example',
      'anaxmaria@riverside.example',
      'head@riverside.example',
    ]);
    expect(await emails({ q: 'riverside', role: 'admin' })).toEqual([]);
  });

  it("never finds another organization's members", async () => {
    expect(await emails({ q: 'ana_maria' }, otherToken)).toEqual(['ana_maria@other.example']);
  });
});

describe('GET /v1/oauth_clients?q=&type=', () => {
  const names = (query: Record<string, string>, t = token) =>
    listed('/v1/oauth_clients', query, 'name', t);

  it('searches the name and filters by type', async () => {
    expect(await names({ q: 'gradebook' })).toEqual(['Gradebook Mobile', 'Gradebook Sync']);
    expect(await names({ q: 'gradebook', type: 'public' })).toEqual(['Gradebook Mobile']);
    expect(await names({ type: 'public' })).toEqual(['Gradebook Mobile', 'Timetable']);
    expect(await names({ q: 'gradebook' }, otherToken)).toEqual(['Gradebook Sync']);
  });

  it('refuses a type it does not know, naming the values it takes', async () => {
    const problem = problemOf(await rawCall(server, '/v1/oauth_clients?type=secret', { token }));
    expect(problem.status).toBe(400);
    expect(problem.detail).toMatch(/confidential, public/);
  });
});

describe('GET /v1/webhook_endpoints?q=', () => {
  const urls = (query: Record<string, string>, t = token) =>
    listed('/v1/webhook_endpoints', query, 'url', t);

  it('searches the url and the description, taking % and _ literally', async () => {
    expect(await urls({ q: 'sis_' })).toEqual(['http://127.0.0.1:9/sis_sync']);
    expect(await urls({ q: 'SYNC' })).toEqual([
      'http://127.0.0.1:9/sisXsync',
      'http://127.0.0.1:9/sis_sync',
    ]);
    expect(await urls({ q: '50%' })).toEqual(['http://127.0.0.1:9/sis_sync']);
    expect(await urls({ q: '%' })).toEqual(['http://127.0.0.1:9/sis_sync']);
    expect(await urls({ q: 'audit', enabled: 'false' })).toEqual([]);
    expect(await urls({ q: 'audit', enabled: 'true' })).toEqual(['http://127.0.0.1:9/audit']);
  });

  it("never finds another organization's endpoints", async () => {
    expect(await urls({ q: 'sync' }, otherToken)).toEqual(['http://127.0.0.1:9/sis_sync']);
  });

  it('keeps finding endpoints as they change, also after the table is rebuilt on SQLite', async () => {
    // SQLite rebuilds webhook_endpoints to change a CHECK constraint (a new disabled reason);
    // the search index's triggers must survive that, or later writes would go unindexed.
    if (DATABASE_KIND === 'sqlite') {
      const runner = server.dataSource.createQueryRunner();
      try {
        await rebuildEndpointsSqlite(runner, REASONS);
      } finally {
        await runner.release();
      }
    }
    const api = rawClient(server, token);
    const created = await api.post<{ id: string }>('/v1/webhook_endpoints', {
      url: 'http://127.0.0.1:9/rebuilt',
      description: 'Gradebook mirror',
      events: ['*'],
    });
    expect(created.status).toBe(201);
    expect(await urls({ q: 'rebuilt' })).toEqual(['http://127.0.0.1:9/rebuilt']);
    expect(await urls({ q: 'gradebook' })).toEqual(['http://127.0.0.1:9/rebuilt']);
    // An edit re-indexes the row: the old description no longer matches, the new one does.
    const edited = await api.patch(`/v1/webhook_endpoints/${created.body.id}`, {
      description: 'Timetable mirror',
    });
    expect(edited.status).toBe(200);
    expect(await urls({ q: 'gradebook' })).toEqual([]);
    expect(await urls({ q: 'timetable' })).toEqual(['http://127.0.0.1:9/rebuilt']);
    expect((await api.delete(`/v1/webhook_endpoints/${created.body.id}`)).status).toBe(200);
    expect(await urls({ q: 'rebuilt' })).toEqual([]);
  });
});

describe('GET /v1/invitations?q=&role=', () => {
  const emails = (query: Record<string, string>, t = token) =>
    listed('/v1/invitations', query, 'email', t);

  it('searches the email, taking _ literally, and filters by role', async () => {
    expect(await emails({ q: 'w_t' })).toEqual(['new_teacher@riverside.example']);
    expect(await emails({ q: 'TEACHER' })).toEqual([
      'new_teacher@riverside.example',
      'newxteacher@riverside.example',
    ]);
    expect(await emails({ role: 'viewer' })).toEqual([
      'newxteacher@riverside.example',
      'parent@elsewhere.example',
    ]);
    expect(await emails({ q: 'teacher', role: 'viewer' })).toEqual([
      'newxteacher@riverside.example',
    ]);
  });

  it("never finds another organization's invitations", async () => {
    expect(await emails({ q: 'teacher' }, otherToken)).toEqual(['new_teacher@other.example']);
  });
});
