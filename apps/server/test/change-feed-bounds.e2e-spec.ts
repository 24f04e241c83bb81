import { encodeFeedCursor } from '../src/events/feed-cursor';
import { expectStatus, positionOf, typedClient, type TypedClient } from './support/api';
import { problemOf, rawClient, startServer, type TestServer } from './support/server';

/** Where a read of the feed may start and stop: `after=oldest`, `until`, and the type filter. */
describe('GET /v1/changes bounds', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(() => server.close());

  async function organizationWith(courses: number) {
    const org = (await server.createOrganization()).id;
    const { token } = await server.createToken(org, ['all']);
    const api = typedClient(server, token);
    for (let i = 1; i <= courses; i += 1)
      expectStatus(await api.courses.create({ body: { code: `B${i}`, title: `B ${i}` } }), 201);
    return { org, token, api };
  }

  /** Moves the changes at `positions` past the 30 days kept. */
  async function age(org: string, positions: number[]) {
    const aged = new Date(Date.now() - 31 * 86_400_000);
    const postgres = server.config.database.type === 'postgres';
    for (const position of positions)
      await server.dataSource.query(
        postgres
          ? 'UPDATE events SET created_at = $1 WHERE organization_id = $2 AND position = $3'
          : 'UPDATE events SET created_at = ? WHERE organization_id = ? AND position = ?',
        [postgres ? aged : aged.toISOString().replace('T', ' ').replace('Z', ''), org, position],
      );
  }

  /** The organization's cursors by position (`[1]` is the cursor just after change 1). */
  async function cursorsOf(api: TypedClient): Promise<string[]> {
    const page = expectStatus(await api.events.changes({ query: {} }), 200).body;
    return ['0', ...page.data.map((event) => event.cursor!)];
  }

  const positions = (page: { data: { position: number | null }[] }) =>
    page.data.map((event) => event.position);

  it('starts from the oldest change kept with after=oldest, where after=0 is a 410', async () => {
    const { org, api } = await organizationWith(3);
    const cursor = await cursorsOf(api);
    await age(org, [1]);
    // Omitted, `after` is 0: the start of the feed, which is gone.
    expect((await api.events.changes({ query: {} })).status).toBe(410);
    expect((await api.events.changes({ query: { after: '0' } })).status).toBe(410);
    const oldest = expectStatus(await api.events.changes({ query: { after: 'oldest' } }), 200);
    expect(positions(oldest.body)).toEqual([2, 3]);
    expect(oldest.body).toMatchObject({ next_cursor: cursor[3], has_more: false });
  });

  it('answers after=oldest with nothing and the head when every change is older than kept', async () => {
    const { org, api } = await organizationWith(2);
    const cursor = await cursorsOf(api);
    await age(org, [1, 2]);
    const page = expectStatus(await api.events.changes({ query: { after: 'oldest' } }), 200).body;
    expect(page).toEqual({ data: [], next_cursor: cursor[2], has_more: false });
    // The next change is read from there, and waiting for it works as from any cursor.
    const waiting = api.events.changes({ query: { after: 'oldest', wait: '5s' } });
    await new Promise((resolve) => setTimeout(resolve, 200));
    await api.courses.create({ body: { code: 'LATE', title: 'Late' } });
    expect(positions(expectStatus(await waiting, 200).body)).toEqual([3]);
  });

  it('stops at until: the cursor ends there and has_more is false once it is reached', async () => {
    const { api } = await organizationWith(5);
    const cursor = await cursorsOf(api);
    const page = expectStatus(
      await api.events.changes({ query: { after: cursor[1], until: cursor[4], limit: 2 } }),
      200,
    ).body;
    expect(positions(page)).toEqual([2, 3]);
    expect(page).toMatchObject({ next_cursor: cursor[3], has_more: true });
    const rest = expectStatus(
      await api.events.changes({ query: { after: page.next_cursor, until: cursor[4] } }),
      200,
    ).body;
    expect(positions(rest)).toEqual([4]);
    expect(rest).toMatchObject({ next_cursor: cursor[4], has_more: false });
    // At until, a waiting read answers at once: nothing it could wait for would be returned.
    const started = Date.now();
    const done = expectStatus(
      await api.events.changes({ query: { after: cursor[4], until: cursor[4], wait: '10s' } }),
      200,
    ).body;
    expect(done).toEqual({ data: [], next_cursor: cursor[4], has_more: false });
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('stops at until past changes of types it does not read', async () => {
    const { org, api } = await organizationWith(1);
    expectStatus(
      await api.students.create({
        body: { student_number: 'U-1', first_name: 'Una', last_name: 'Til' },
      }),
      201,
    );
    expectStatus(await api.courses.create({ body: { code: 'U2', title: 'After' } }), 201);
    const cursor = await cursorsOf(api);
    const { token } = await server.createToken(org, ['events:read', 'courses:read']);
    const courses = typedClient(server, token);
    const page = expectStatus(
      await courses.events.changes({ query: { after: cursor[1], until: cursor[2] } }),
      200,
    ).body;
    expect(page).toEqual({ data: [], next_cursor: cursor[2], has_more: false });
    expect(positionOf(page.next_cursor)).toBe(2);
  });

  it('refuses an until before after or ahead of the feed with a 400 naming until', async () => {
    const { org, token, api } = await organizationWith(2);
    const cursor = await cursorsOf(api);
    const ahead = `3.${cursor[2]!.split('.')[1]}`;
    const raw = rawClient(server, token);
    for (const query of [
      `after=${cursor[2]}&until=${cursor[1]}`,
      `until=${encodeFeedCursor(org, 3)}`,
      `until=${ahead}`,
      'until=2',
      'until=abc',
      'until=oldest',
    ]) {
      const res = await raw.get(`/v1/changes?${query}`);
      expect([query, res.status]).toEqual([query, 400]);
      expect(problemOf(res).errors?.map((e) => e.path)).toContain('query.until');
    }
  });

  it('answers a type filter the token may not read with a 403 naming the type and the scope', async () => {
    const { org } = await organizationWith(1);
    const { token } = await server.createToken(org, ['events:read', 'courses:read']);
    const raw = rawClient(server, token);
    const res = await raw.get('/v1/changes?type=course.created,payment.succeeded');
    expect(res.status).toBe(403);
    const problem = problemOf(res);
    expect(problem).toMatchObject({ code: 'insufficient_scope' });
    expect(problem.detail).toContain('payment.succeeded');
    expect(problem.detail).toContain('payments:read');
    expect(res.headers.get('www-authenticate')).toContain('scope="payments:read"');
    // The types it may read are still a filter.
    expect((await raw.get('/v1/changes?type=course.created')).status).toBe(200);
  });
});
