/**
 * `status=active|expired|revoked` on `GET /v1/personal_access_tokens`: a state derived from
 * `revoked_at` and `expires_at` against the server's clock (moved here, not slept), combined with
 * `q` and paging, confined to the caller's organization, refused with a 400 naming `query.status`
 * for a value it does not know. Runs on SQLite, and on PostgreSQL with TEST_DATABASE_URL.
 */
import { ManualClock } from '../src/testing';
import { problemOf, rawCall, rawClient, startServer, type TestServer } from './support/server';

const HOUR = 3_600_000;
const clock = new ManualClock();

let server: TestServer;
let token: string;
let otherToken: string;

type Listed = {
  data: { name: string; revoked_at: string | null; expires_at: string | null }[];
  meta: { total: number };
  links: { next: string | null };
};

async function list(query: Record<string, string>, t = token) {
  const res = await rawCall<Listed>(
    server,
    `/v1/personal_access_tokens?${new URLSearchParams(query).toString()}`,
    { token: t },
  );
  expect(res.status).toBe(200);
  return res.body;
}

/** The names a list with `query` returns (one page holds them all), sorted. */
async function names(query: Record<string, string>, t = token) {
  const body = await list(query, t);
  expect(body.meta.total).toBe(body.data.length);
  return body.data.map((row) => row.name).sort();
}

beforeAll(async () => {
  // A search counts 1 match past its page, so one of `per_page=1` over 2+ matches takes its page
  // by walking the list's order on SQLite (SEARCH_WALK_ROWS), with the status predicate too.
  server = await startServer({ LIST_SEARCH_COUNT_AHEAD: '1' }, { clock });
  const org = await server.createOrganization({ name: 'Riverside School' });
  // The caller's own token never expires, so it still works after the clock moves.
  ({ token } = await server.createToken(org.id, ['all'], { name: 'operator' }));
  const api = rawClient(server, token);
  const now = clock.nowMs();
  const make = async (name: string, expiresInMs: number | null) => {
    const res = await api.post<{ id: string }>('/v1/personal_access_tokens', {
      name,
      scopes: ['students:read'],
      expires_at: expiresInMs === null ? null : new Date(now + expiresInMs).toISOString(),
    });
    expect(res.status).toBe(201);
    return res.body.id;
  };
  await make('Nightly sync', null);
  await make('Nightly backup', 3 * HOUR);
  await make('Term report', 1 * HOUR);
  await make('Nightly import', 1 * HOUR);
  const revokedExpiring = await make('Nightly revoked', 1 * HOUR);
  const revoked = await make('Old laptop', null);
  for (const id of [revoked, revokedExpiring]) {
    expect((await api.delete(`/v1/personal_access_tokens/${id}`)).status).toBe(200);
  }
  // Another organization with the same names, which no list of ours may return.
  const other = await server.createOrganization({ name: 'Other School' });
  ({ token: otherToken } = await server.createToken(other.id, ['all'], { name: 'operator' }));
  await server.createToken(other.id, ['students:read'], { name: 'Nightly sync' });
  const theirs = await server.createToken(other.id, ['students:read'], { name: 'Old laptop' });
  await server.revokeToken(theirs.id);
  // Two hours on, on the server's clock only: the 1-hour tokens have expired, the 3-hour one not.
  clock.advance(2 * HOUR);
}, 60_000);

afterAll(() => server?.close());

describe('GET /v1/personal_access_tokens?status=', () => {
  it('tells active, expired and revoked tokens apart by the server clock', async () => {
    expect(await names({ status: 'active' })).toEqual([
      'Nightly backup',
      'Nightly sync',
      'operator',
    ]);
    expect(await names({ status: 'expired' })).toEqual(['Nightly import', 'Term report']);
    // A revoked token that has also expired is listed as revoked, and only as revoked.
    expect(await names({ status: 'revoked' })).toEqual(['Nightly revoked', 'Old laptop']);
    expect(await names({})).toHaveLength(7);
  });

  it('takes several states, comma-separated, as any of them', async () => {
    expect(await names({ status: 'expired,revoked' })).toEqual([
      'Nightly import',
      'Nightly revoked',
      'Old laptop',
      'Term report',
    ]);
    expect(await names({ status: 'active,expired,revoked' })).toHaveLength(7);
  });

  it('combines with q, on both the indexed (3+) and the short search', async () => {
    expect(await names({ q: 'nightly', status: 'active' })).toEqual([
      'Nightly backup',
      'Nightly sync',
    ]);
    expect(await names({ q: 'NIGHTLY', status: 'expired,revoked' })).toEqual([
      'Nightly import',
      'Nightly revoked',
    ]);
    expect(await names({ q: 'ni', status: 'expired' })).toEqual(['Nightly import']);
    expect(await names({ q: 'term', status: 'active' })).toEqual([]);
  });

  /** Every name of every page, following `links.next` from the first page of `query`. */
  async function paged(query: Record<string, string>) {
    const first = await list(query);
    if (first.links.next)
      expect(first.links.next).toContain(`status=${encodeURIComponent(query.status ?? '')}`);
    const seen = first.data.map((row) => row.name);
    let next = first.links.next;
    while (next) {
      const { pathname, search } = new URL(next);
      const res = await rawCall<Listed>(server, pathname + search, { token });
      expect(res.status).toBe(200);
      seen.push(...res.body.data.map((row) => row.name));
      next = res.body.links.next;
    }
    return seen.sort();
  }

  it('pages a filtered list with the filter kept in the links', async () => {
    const first = await list({ status: 'active,expired', per_page: '2' });
    expect(first.meta.total).toBe(5);
    expect(first.data).toHaveLength(2);
    expect(await paged({ status: 'active,expired', per_page: '2' })).toEqual([
      'Nightly backup',
      'Nightly import',
      'Nightly sync',
      'Term report',
      'operator',
    ]);
  });

  it('pages a search with the filter one row at a time, the same rows', async () => {
    expect(await paged({ q: 'nightly', status: 'active,expired', per_page: '1' })).toEqual([
      'Nightly backup',
      'Nightly import',
      'Nightly sync',
    ]);
    expect(await paged({ q: 'nightly', status: 'revoked', per_page: '1' })).toEqual([
      'Nightly revoked',
    ]);
  });

  it("never returns another organization's tokens", async () => {
    expect(await names({ status: 'revoked' }, otherToken)).toEqual(['Old laptop']);
    expect(await names({ status: 'active', q: 'nightly' }, otherToken)).toEqual(['Nightly sync']);
    expect(await names({ status: 'expired' }, otherToken)).toEqual([]);
  });

  it('refuses a state it does not know with a 400 naming query.status', async () => {
    for (const status of ['disabled', 'active,', 'ACTIVE']) {
      const res = await rawCall(
        server,
        `/v1/personal_access_tokens?status=${encodeURIComponent(status)}`,
        { token },
      );
      const problem = problemOf(res);
      expect(problem.status).toBe(400);
      expect(JSON.stringify(problem.errors)).toContain('query.status');
    }
    const problem = problemOf(
      await rawCall(server, '/v1/personal_access_tokens?status=disabled', { token }),
    );
    expect(problem.detail).toMatch(/active, expired, revoked/);
  });
});
