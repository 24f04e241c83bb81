import type { Export, ExportBatch } from '@platform/contract';
import { expectStatus, positionOf, typedClient, type TypedClient } from './support/api';
import { problemOf, rawClient, startServer, type TestServer } from './support/server';

type Row = { id: string; student_id?: string; course_id?: string };

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls each export until none is queued or running. */
async function settled(raw: ReturnType<typeof rawClient>, ids: string[]): Promise<Export[]> {
  for (;;) {
    const all = await Promise.all(
      ids.map(async (id) => (await raw.get<Export>(`/v1/exports/${id}`)).body),
    );
    if (all.every((e) => e.status !== 'queued' && e.status !== 'running')) return all;
    await pause(20);
  }
}

/** The exports' statuses in one statement (one moment), in the order of `ids`. */
async function statusesOf(server: TestServer, ids: string[]): Promise<string[]> {
  const rows = await server.dataSource.query<{ id: string; status: string }[]>(
    `SELECT id, status FROM exports WHERE id IN (${ids.map((id) => `'${id}'`).join(', ')})`,
  );
  return ids.map((id) => rows.find((row) => row.id === id)!.status);
}

/**
 * Polls a batch until none of it is queued or running, checking at every look that it finishes
 * together: never some of it succeeded while the rest is not.
 */
async function settledTogether(
  server: TestServer,
  raw: ReturnType<typeof rawClient>,
  ids: string[],
): Promise<Export[]> {
  for (;;) {
    const statuses = await statusesOf(server, ids);
    const succeeded = statuses.filter((status) => status === 'succeeded').length;
    expect([0, ids.length]).toContain(succeeded);
    if (statuses.every((s) => s !== 'queued' && s !== 'running')) return settled(raw, ids);
    await pause(5);
  }
}

/** An export's NDJSON file as records by id. */
async function fileOf(server: TestServer, token: string, id: string): Promise<Map<string, Row>> {
  const res = await fetch(`${server.url}/v1/exports/${id}/file`, {
    headers: { Authorization: `Bearer ${token}` },
  });
  expect(res.status).toBe(200);
  const rows = new Map<string, Row>();
  for (const line of (await res.text()).split('\n')) {
    if (line) rows.set((JSON.parse(line) as Row).id, JSON.parse(line) as Row);
  }
  return rows;
}

/** Every record of a collection as the API lists it now, by id. */
async function listAll(api: TypedClient, collection: 'students' | 'courses' | 'enrollments') {
  const out = new Map<string, Row>();
  for (let page = 1; ; page += 1) {
    const res = expectStatus(await api[collection].list({ query: { page, per_page: 100 } }), 200);
    for (const row of res.body.data as Row[]) out.set(row.id, row);
    if (res.body.data.length < 100) return out;
  }
}

/** Writers that each add a student, a course and an enrollment of both, over and over. */
function startWriters(api: TypedClient, count: number) {
  let stop = false;
  let made = 0;
  const writer = async (w: number) => {
    for (let i = 0; !stop; i += 1) {
      const student = expectStatus(
        await api.students.create({
          body: { student_number: `W${w}-${i}`, first_name: 'Writer', last_name: `${w}-${i}` },
        }),
        201,
      ).body;
      const course = expectStatus(
        await api.courses.create({ body: { code: `W${w}-${i}`, title: `Course ${w}-${i}` } }),
        201,
      ).body;
      expectStatus(
        await api.enrollments.create({ body: { student_id: student.id, course_id: course.id } }),
        201,
      );
      made += 1;
    }
  };
  const running = Array.from({ length: count }, (_, w) => writer(w));
  return {
    made: () => made,
    stop: async () => {
      stop = true;
      await Promise.all(running);
    },
  };
}

/** Applies every change after `cursor` to the copies (by event type's resource); how many. */
async function applyFeed(
  api: TypedClient,
  cursor: string,
  copies: Record<string, Map<string, Row>>,
) {
  let after = cursor;
  let applied = 0;
  for (;;) {
    const page = expectStatus(await api.events.changes({ query: { after, limit: 500 } }), 200).body;
    for (const event of page.data) {
      const [kind, action] = event.type.split('.') as [string, string];
      const data = event.data as Row;
      if (action === 'deleted') copies[kind]!.delete(data.id);
      else copies[kind]!.set(data.id, data);
      applied += 1;
    }
    after = page.next_cursor;
    if (!page.has_more) return applied;
  }
}

/**
 * `POST /v1/exports/batch`: one export per collection, all read from one snapshot. What an
 * integrator relies on: the files agree with each other (every enrollment's student and course is
 * in the other files) and the feed after the one shared cursor completes all of them exactly.
 */
describe('Export batches', () => {
  let server: TestServer;
  let orgId: string;
  let token: string;
  let api: TypedClient;
  let raw: ReturnType<typeof rawClient>;

  beforeAll(async () => {
    server = await startServer();
    orgId = (await server.createOrganization()).id;
    ({ token } = await server.createToken(orgId, ['all']));
    api = typedClient(server, token);
    raw = rawClient(server, token);
    // Enough students that reading them takes a while: writers land between the files.
    await server.insertStudents(orgId, 20_000);
  }, 120_000);
  afterAll(() => server.close());

  it('reads every collection of the batch from one snapshot: files that agree, one cursor', async () => {
    // Writers add a student, a course and an enrollment of both, over and over, from before
    // the batch starts until after it finishes.
    const writers = startWriters(api, 3);
    while (writers.made() < 3) await pause(5);

    const created = await raw.post<ExportBatch>('/v1/exports/batch', {
      collections: ['students', 'courses', 'enrollments'],
    });
    expect(created.status).toBe(202);
    expect(created.body.object).toBe('export_batch');
    expect(created.body.data.map((e) => [e.collection, e.format, e.status])).toEqual([
      ['students', 'ndjson', 'queued'],
      ['courses', 'ndjson', 'queued'],
      ['enrollments', 'ndjson', 'queued'],
    ]);
    const done = await settledTogether(
      server,
      raw,
      created.body.data.map((e) => e.id),
    );
    const finishedAt = writers.made();
    while (writers.made() < finishedAt + 3) await pause(5);
    await writers.stop();

    expect(done.map((e) => e.status)).toEqual(['succeeded', 'succeeded', 'succeeded']);
    const cursor = done[0]!.cursor!;
    expect(done.map((e) => e.cursor)).toEqual([cursor, cursor, cursor]);

    const [students, courses, enrollments] = await Promise.all(
      done.map((e) => fileOf(server, token, e.id)),
    );
    expect(done.map((e) => e.row_count)).toEqual([
      students!.size,
      courses!.size,
      enrollments!.size,
    ]);
    // The files agree: nothing in one refers to what another does not have.
    expect(enrollments!.size).toBeGreaterThan(0);
    for (const enrollment of enrollments!.values()) {
      expect(students!.has(enrollment.student_id!)).toBe(true);
      expect(courses!.has(enrollment.course_id!)).toBe(true);
    }

    // The files, then the feed after the one cursor: exactly what the API has now.
    const copies = { student: students!, course: courses!, enrollment: enrollments! };
    const applied = await applyFeed(api, cursor, copies);
    // Writes landed after the snapshot too, or the cursor was not put to the test.
    expect(applied).toBeGreaterThan(0);
    const [studentsNow, coursesNow, enrollmentsNow] = await Promise.all([
      listAll(api, 'students'),
      listAll(api, 'courses'),
      listAll(api, 'enrollments'),
    ]);
    for (const [copy, truth] of [
      [copies.student, studentsNow],
      [copies.course, coursesNow],
      [copies.enrollment, enrollmentsNow],
    ] as const) {
      expect([...copy.keys()].sort()).toEqual([...truth.keys()].sort());
      for (const [id, row] of truth) expect(copy.get(id)).toEqual(row);
    }
  }, 120_000);

  /** A new organization, so each test has its own rate limit (a batch costs 120 of 600). */
  async function freshOrganization() {
    orgId = (await server.createOrganization()).id;
    ({ token } = await server.createToken(orgId, ['all']));
    api = typedClient(server, token);
    raw = rawClient(server, token);
    await server.insertStudents(orgId, 50);
  }

  it('a batch whose runner died is read again whole, from one new snapshot', async () => {
    await freshOrganization();
    const created = expectStatus(
      await api.exports.createBatch({
        body: { collections: ['courses', 'students'], format: 'csv' },
      }),
      202,
    ).body;
    const ids = created.data.map((e) => e.id);
    const first = await settled(raw, ids);
    expect(first.map((e) => e.status)).toEqual(['succeeded', 'succeeded']);
    // As a runner that died mid-batch leaves it: every export running, the lease lapsed.
    const list = ids.map((id) => `'${id}'`).join(', ');
    await server.dataSource.query(
      `UPDATE exports SET status = 'running', lease_until = created_at, completed_at = NULL WHERE id IN (${list})`,
    );
    expectStatus(
      await api.students.create({
        body: { student_number: 'LATE-1', first_name: 'Late', last_name: 'One' },
      }),
      201,
    );
    // Any export started wakes the runner, which takes the oldest first: the lapsed batch.
    const nudge = expectStatus(
      await api.exports.create({ body: { collection: 'exams', format: 'ndjson' } }),
      202,
    ).body;
    const again = await settled(raw, [...ids, nudge.id]);
    expect(again.map((e) => e.status)).toEqual(['succeeded', 'succeeded', 'succeeded']);
    const [courses, students] = again;
    expect(positionOf(students!.cursor)).toBeGreaterThan(positionOf(first[1]!.cursor));
    expect(courses!.cursor).toBe(students!.cursor);
    expect(students!.row_count).toBe(first[1]!.row_count + 1);
  }, 60_000);

  it('a runner whose batch another took over stops at its next write: it finishes, fails and deletes nothing', async () => {
    orgId = (await server.createOrganization()).id;
    ({ token } = await server.createToken(orgId, ['all']));
    api = typedClient(server, token);
    raw = rawClient(server, token);
    // Several chunks of students: the takeover lands while the file is being written.
    await server.insertStudents(orgId, 20_000);
    const created = expectStatus(
      await api.exports.createBatch({ body: { collections: ['students', 'courses'] } }),
      202,
    ).body;
    const ids = created.data.map((e) => e.id);
    const list = ids.map((id) => `'${id}'`).join(', ');
    const rowsOf = () =>
      server.dataSource.query<
        { id: string; status: string; row_count: number; claim_token: string | null }[]
      >(`SELECT id, status, row_count, claim_token FROM exports WHERE id IN (${list}) ORDER BY id`);
    for (;;) {
      const [students] = await rowsOf();
      if (students!.status === 'running' && Number(students!.row_count) > 0) break;
      expect(students!.status).not.toBe('succeeded');
      await pause(2);
    }
    // What another instance does when this one's lease lapsed: a claim of its own, held on.
    await server.dataSource.query(
      `UPDATE exports SET claim_token = 'another-runner', lease_until = NULL WHERE id IN (${list})`,
    );
    // The runner takes exports one run at a time: once a later export is done, its run of the
    // batch has ended.
    const nudge = expectStatus(
      await api.exports.create({ body: { collection: 'exams', format: 'ndjson' } }),
      202,
    ).body;
    expect((await settled(raw, [nudge.id]))[0]!.status).toBe('succeeded');
    const after = await rowsOf();
    expect(after.map((row) => [row.status, row.claim_token])).toEqual([
      ['running', 'another-runner'],
      ['running', 'another-runner'],
    ]);
    // What it had written stays for its successor to start over, not deleted under it.
    const [{ chunks }] = await server.dataSource.query<[{ chunks: number | string }]>(
      `SELECT COUNT(*) AS chunks FROM export_chunks WHERE export_id = '${ids[0]}'`,
    );
    expect(Number(chunks)).toBeGreaterThan(0);

    // The successor's lease lapses in turn: the batch is read again whole, once.
    await server.dataSource.query(
      `UPDATE exports SET lease_until = created_at WHERE id IN (${list})`,
    );
    expectStatus(
      await api.exports.create({ body: { collection: 'exams', format: 'ndjson' } }),
      202,
    );
    const done = await settledTogether(server, raw, ids);
    expect(done.map((e) => e.status)).toEqual(['succeeded', 'succeeded']);
    const students = await fileOf(server, token, ids[0]!);
    expect(students.size).toBe(20_000);
    expect(done[0]!.row_count).toBe(20_000);
  }, 120_000);

  it('refuses a bad batch with the field named, and starts none of it', async () => {
    await freshOrganization();
    const cases: [unknown, string][] = [
      [{ collections: ['students', 'students'] }, 'body.collections'],
      [{ collections: [] }, 'body.collections'],
      [{ collections: ['students', 'teachers'] }, 'body.collections.1'],
      [{ collections: ['students'], format: 'xml' }, 'body.format'],
      [{ collections: ['students'], filters: { status: 'active' } }, 'body.filters'],
      [{}, 'body.collections'],
    ];
    const before = expectStatus(await api.exports.list({ query: { per_page: 100 } }), 200).body.data
      .length;
    for (const [body, path] of cases) {
      const res = await raw.post('/v1/exports/batch', body);
      expect(res.status).toBe(400);
      expect(problemOf(res).errors?.map((e) => e.path)).toContain(path);
    }
    // A token that may read students but not payments: 403 naming the missing scope.
    const narrow = await server.createToken(orgId, [
      'exports:write',
      'exports:read',
      'students:read',
    ]);
    const refused = await rawClient(server, narrow.token).post('/v1/exports/batch', {
      collections: ['students', 'payments'],
    });
    expect(refused.status).toBe(403);
    expect(problemOf(refused).detail).toContain("'payments:read'");
    const after = expectStatus(await api.exports.list({ query: { per_page: 100 } }), 200).body.data
      .length;
    expect(after).toBe(before);
  });
});
