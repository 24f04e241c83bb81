import { TransactionRunner } from '../src/common/transactions';
import { EventsService } from '../src/events/events.service';
import { Draining } from '../src/health/draining';
import { encodeFeedCursor } from '../src/events/feed-cursor';
import {
  expectStatus,
  positionOf,
  type QueryOf,
  typedClient,
  type TypedClient,
} from './support/api';
import { problemOf, rawClient, startServer, type TestServer } from './support/server';

describe('GET /v1/changes', () => {
  let server: TestServer;
  let orgId: string;
  let api: TypedClient;
  let raw: ReturnType<typeof rawClient>;

  beforeAll(async () => {
    server = await startServer();
    orgId = (await server.createOrganization()).id;
    const { token } = await server.createToken(orgId, ['all']);
    api = typedClient(server, token);
    raw = rawClient(server, token);
  });
  afterAll(() => server.close());

  const read = async (query: QueryOf<TypedClient['events']['changes']> = {}) =>
    expectStatus(await api.events.changes({ query }), 200).body;

  it('reads changes oldest first after a cursor, deletions as tombstones, in pages', async () => {
    const student = expectStatus(
      await api.students.create({
        body: { student_number: 'CF-1', first_name: 'Cy', last_name: 'Feed' },
      }),
      201,
    ).body;
    await api.students.update({ params: { id: student.id }, body: { grade_level: 5 } });
    await api.courses.create({ body: { code: 'CF', title: 'Feeds' } });
    await api.students.delete({ params: { id: student.id } });

    const all = await read();
    expect(all.data.map((e) => [e.position, e.type])).toEqual([
      [1, 'student.created'],
      [2, 'student.updated'],
      [3, 'course.created'],
      [4, 'student.deleted'],
    ]);
    expect(all.data[3]).toMatchObject({
      object: 'event',
      data: { id: student.id, object: 'student', deleted: true },
    });
    // Each event's cursor names its position, and the page ends at the last one's.
    expect(all.data.map((e) => positionOf(e.cursor))).toEqual([1, 2, 3, 4]);
    expect(new Set(all.data.map((e) => e.cursor)).size).toBe(4);
    expect(all).toMatchObject({ next_cursor: all.data[3]!.cursor, has_more: false });

    const first = await read({ limit: 3 });
    expect(first.data.map((e) => e.position)).toEqual([1, 2, 3]);
    expect(first).toMatchObject({ next_cursor: all.data[2]!.cursor, has_more: true });
    const rest = await read({ after: first.next_cursor });
    expect(rest.data.map((e) => e.position)).toEqual([4]);
    expect(await read({ after: rest.next_cursor })).toEqual({
      data: [],
      next_cursor: all.data[3]!.cursor,
      has_more: false,
    });
    // An event's cursor is where to read on from it.
    expect((await read({ after: all.data[1]!.cursor! })).data.map((e) => e.position)).toEqual([
      3, 4,
    ]);
    // The events list carries the same positions and cursors.
    const listed = expectStatus(await api.events.list({ query: { sort: 'created_at' } }), 200);
    expect(listed.body.data.map((e) => [e.position, e.cursor])).toEqual(
      all.data.map((e) => [e.position, e.cursor]),
    );
  });

  it('has a tombstone for the deletion of every resource that can be deleted', async () => {
    const org = (await server.createOrganization()).id;
    const own = typedClient(server, (await server.createToken(org, ['all'])).token);
    const student = expectStatus(
      await own.students.create({
        body: { student_number: 'TB-1', first_name: 'Tomb', last_name: 'Stone' },
      }),
      201,
    ).body;
    const course = expectStatus(
      await own.courses.create({ body: { code: 'TB', title: 'Tombstones' } }),
      201,
    ).body;
    const exam = expectStatus(
      await own.exams.create({ body: { course_id: course.id, title: 'Final', max_score: 10 } }),
      201,
    ).body;
    await own.exams.delete({ params: { id: exam.id } });
    await own.courses.delete({ params: { id: course.id } });
    await own.students.delete({ params: { id: student.id } });
    const third = expectStatus(await own.events.changes({ query: { limit: 3 } }), 200).body;
    const page = expectStatus(
      await own.events.changes({ query: { after: third.next_cursor } }),
      200,
    ).body;
    expect(page.data.map((e) => [e.type, e.data])).toEqual([
      ['exam.deleted', { id: exam.id, object: 'exam', deleted: true }],
      ['course.deleted', { id: course.id, object: 'course', deleted: true }],
      ['student.deleted', { id: student.id, object: 'student', deleted: true }],
    ]);
    for (const event of page.data) expect(Date.parse(event.timestamp)).not.toBeNaN();
  });

  it('shows only the types the token may read, and moves the cursor past the others', async () => {
    const { token } = await server.createToken(orgId, ['events:read', 'courses:read']);
    const courses = typedClient(server, token);
    const page = expectStatus(await courses.events.changes({ query: {} }), 200).body;
    expect(page.data.map((e) => e.type)).toEqual(['course.created']);
    expect(page.next_cursor).toBe((await read()).next_cursor);
    expect(positionOf(page.next_cursor)).toBe(4);
    const onlyDeletes = await read({ type: 'student.deleted' });
    expect(onlyDeletes.data.map((e) => e.position)).toEqual([4]);
    const { token: noEvents } = await server.createToken(orgId, ['students:read']);
    expect((await typedClient(server, noEvents).events.changes({ query: {} })).status).toBe(403);
  });

  it('refuses a malformed or foreign cursor and an unbounded wait with a 400 naming it', async () => {
    const own = (await read()).next_cursor;
    const [position, tag] = own.split('.') as [string, string];
    const other = (await server.createOrganization()).id;
    const otherApi = typedClient(server, (await server.createToken(other, ['all'])).token);
    await otherApi.courses.create({ body: { code: 'OT-1', title: 'Theirs' } });
    const theirs = expectStatus(await otherApi.events.changes({ query: {} }), 200).body;
    expect(positionOf(theirs.next_cursor)).toBeLessThan(positionOf(own));
    for (const [query, path] of [
      ['after=abc', 'query.after'],
      ['after=-1', 'query.after'],
      // A bare position, another organization's cursor, a tag moved to another position.
      [`after=${position}`, 'query.after'],
      [`after=${theirs.next_cursor}`, 'query.after'],
      [`until=${theirs.next_cursor}`, 'query.until'],
      [`after=${Number(position) - 1}.${tag}`, 'query.after'],
      [`after=${encodeFeedCursor(orgId, 99999)}`, 'query.after'],
      ['wait=31s', 'query.wait'],
      ['wait=soon', 'query.wait'],
      ['limit=0', 'query.limit'],
      ['limit=1001', 'query.limit'],
      ['page=2', 'query.page'],
    ] as const) {
      const res = await raw.get(`/v1/changes?${query}`);
      expect([query, res.status]).toEqual([query, 400]);
      expect(problemOf(res).errors?.map((e) => e.path)).toContain(path);
    }
  });

  it('never shows a change before its transaction commits, nor one that rolls back', async () => {
    const org = (await server.createOrganization()).id;
    const own = typedClient(server, (await server.createToken(org, ['all'])).token);
    await own.courses.create({ body: { code: 'RB-1', title: 'Committed' } });
    const first = expectStatus(await own.events.changes({ query: {} }), 200).body.next_cursor;
    expect(positionOf(first)).toBe(1);
    const transactions = server.app.get(TransactionRunner);
    const events = server.app.get(EventsService);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let allocated!: () => void;
    const positioned = new Promise<void>((resolve) => (allocated = resolve));
    const failing = transactions.run(async (manager) => {
      await events.record(manager, org, 'course.deleted', {
        id: 'crs_rolledback',
        object: 'course',
        deleted: true,
      } as never);
      // After the feed's own hook: the position is taken, the COMMIT not yet run.
      transactions.beforeCommit(manager, async () => {
        allocated();
        await gate;
        throw new Error('the commit fails');
      });
    });
    await positioned;
    const reading = own.events.changes({ query: { after: first } });
    await new Promise((resolve) => setTimeout(resolve, 100));
    release();
    await expect(failing).rejects.toThrow('the commit fails');
    expect(expectStatus(await reading, 200).body).toEqual({
      data: [],
      next_cursor: first,
      has_more: false,
    });
    await own.courses.create({ body: { code: 'RB-2', title: 'Next' } });
    const after = expectStatus(await own.events.changes({ query: { after: first } }), 200).body;
    expect(after.data.map((e) => [e.position, e.type])).toEqual([[2, 'course.created']]);
  });

  it('long-polls: an empty read with wait answers as soon as a change commits', async () => {
    const head = (await read()).next_cursor;
    const started = Date.now();
    const waiting = api.events.changes({ query: { after: head, wait: '10s' } });
    await new Promise((resolve) => setTimeout(resolve, 200));
    await api.courses.create({ body: { code: 'CF-LP', title: 'Long poll' } });
    const page = expectStatus(await waiting, 200).body;
    expect(page.data.map((e) => e.type)).toEqual(['course.created']);
    expect(Date.now() - started).toBeLessThan(3000);
    // With nothing new it answers empty once the wait is over.
    const quiet = Date.now();
    const empty = await read({ after: page.next_cursor, wait: '1s' });
    expect(empty.data).toEqual([]);
    expect(Date.now() - quiet).toBeGreaterThanOrEqual(900);
  });

  it('checks a waiting read’s access again when it wakes: a revoked token or a removed member gets 401, not the change', async () => {
    const org = (await server.createOrganization()).id;
    const writer = typedClient(server, (await server.createToken(org, ['all'])).token);
    const admin = await server.createUser(org, 'admin@feed.test', 'a long enough password', {
      role: 'admin',
    });
    const member = await server.createUser(org, 'dev@feed.test', 'a long enough password', {
      role: 'developer',
    });
    const revoked = await server.createToken(org, ['events:read', 'courses:read']);
    const removed = await server.createToken(org, ['events:read', 'courses:read'], {
      userId: member.id,
    });
    const adminApi = typedClient(
      server,
      (await server.createToken(org, ['all'], { userId: admin.id })).token,
    );
    const wait = (token: string) =>
      typedClient(server, token).events.changes({ query: { after: '0', wait: '10s' } });

    const waitingRevoked = wait(revoked.token);
    const waitingRemoved = wait(removed.token);
    await new Promise((resolve) => setTimeout(resolve, 300));
    await server.revokeToken(revoked.id);
    expectStatus(await adminApi.members.delete({ params: { id: member.id } }), 200);
    await writer.courses.create({ body: { code: 'RV', title: 'After revocation' } });

    const first = await waitingRevoked;
    expect(first.status).toBe(401);
    expect(first.body).toMatchObject({
      code: 'unauthorized',
      detail: 'The bearer token has been revoked',
    });
    const second = await waitingRemoved;
    expect(second.status).toBe(401);
    expect(second.body).toMatchObject({ code: 'unauthorized' });
  });

  it('answers 410 for a cursor older than the retention, telling to start from an export', async () => {
    const org = (await server.createOrganization()).id;
    const old = typedClient(server, (await server.createToken(org, ['all'])).token);
    await old.courses.create({ body: { code: 'OLD', title: 'Old' } });
    await old.courses.create({ body: { code: 'NEW', title: 'New' } });
    const [oldest] = expectStatus(await old.events.changes({ query: {} }), 200).body.data;
    const aged = new Date(Date.now() - 31 * 86_400_000);
    await server.dataSource.query(
      server.config.database.type === 'postgres'
        ? 'UPDATE events SET created_at = $1 WHERE organization_id = $2 AND position = 1'
        : 'UPDATE events SET created_at = ? WHERE organization_id = ? AND position = 1',
      [
        server.config.database.type === 'postgres'
          ? aged
          : aged.toISOString().replace('T', ' ').replace('Z', ''),
        org,
      ],
    );
    const gone = await old.events.changes({ query: { after: '0' } });
    expect(gone.status).toBe(410);
    expect(gone.body).toMatchObject({ code: 'cursor_expired', status: 410 });
    expect((gone.body as { detail: string }).detail).toContain('POST /v1/exports');
    const fresh = expectStatus(
      await old.events.changes({ query: { after: oldest!.cursor! } }),
      200,
    ).body;
    expect(fresh.data.map((e) => e.position)).toEqual([2]);
  });
});

describe('GET /v1/changes during a shutdown', () => {
  it('answers a waiting read as soon as the server starts draining', async () => {
    const server = await startServer();
    try {
      const orgId = (await server.createOrganization()).id;
      const api = typedClient(server, (await server.createToken(orgId, ['all'])).token);
      const started = Date.now();
      const waiting = api.events.changes({ query: { wait: '30s' } });
      await new Promise((resolve) => setTimeout(resolve, 200));
      server.app.get(Draining).begin();
      const page = expectStatus(await waiting, 200).body;
      expect(page).toEqual({ data: [], next_cursor: '0', has_more: false });
      expect(Date.now() - started).toBeLessThan(2000);
    } finally {
      await server.close();
    }
  });
});
