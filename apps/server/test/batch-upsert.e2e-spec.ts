import { contract } from '@platform/contract';
import { batchCaller } from './support/batch';
import { eventsOf, rawCall, rawClient, startServer, type TestServer } from './support/server';

type Row = { id: string; external_id: string | null; [field: string]: unknown };

describe('batch upserts keyed by external_id (POST /v1/students/batch, /v1/courses/batch)', () => {
  let server: TestServer;
  let orgId: string;
  let token: string;
  let raw: ReturnType<typeof rawClient>;

  beforeAll(async () => {
    server = await startServer();
    orgId = (await server.createOrganization()).id;
    ({ token } = await server.createToken(orgId, ['all']));
    raw = rawClient(server, token);
  });
  afterAll(() => server.close());

  const student = (key: string, extra: object = {}) => ({
    external_id: key,
    student_number: `N-${key}`,
    first_name: 'Ada',
    last_name: key,
    ...extra,
  });
  const batch = (path: string, items: unknown[], headers: Record<string, string> = {}) =>
    batchCaller(server, token)(path, items, headers);
  const count = async (query: string) =>
    (await raw.get<{ data: Row[] }>(`/v1/students?per_page=100&${query}`)).body.data.length;

  it('creates the new, updates the changed, leaves the rest; one result per item, in order', async () => {
    const first = await batch('/v1/students/batch', [
      student('A-1'),
      student('A-2'),
      student('A-3'),
    ]);
    expect(first.status).toBe(200);
    expect(first.body.counts).toEqual({ created: 3, updated: 0, unchanged: 0, failed: 0 });
    const ids = first.body.data.map((r) => r.id);

    const before = (await eventsOf(server, orgId)).length;
    const second = await batch('/v1/students/batch', [
      student('A-3', { grade_level: 7 }),
      student('A-1'),
      { external_id: 'A-2', last_name: 'Renamed' },
      student('A-4'),
    ]);
    expect(second.status).toBe(200);
    expect(second.body.data.map((r) => [r.index, r.external_id, r.status, r.error])).toEqual([
      [0, 'A-3', 'updated', null],
      [1, 'A-1', 'unchanged', null],
      [2, 'A-2', 'updated', null],
      [3, 'A-4', 'created', null],
    ]);
    expect(second.body.data.slice(0, 3).map((r) => r.id)).toEqual([ids[2], ids[0], ids[1]]);
    expect(second.body.counts).toEqual({ created: 1, updated: 2, unchanged: 1, failed: 0 });

    // An update changes only the fields sent (no create defaults), as a PATCH would.
    const a2 = (await raw.get<Row>('/v1/students/ext:A-2')).body;
    expect(a2).toMatchObject({ last_name: 'Renamed', first_name: 'Ada', student_number: 'N-A-2' });
    expect((await raw.get<Row>('/v1/students/ext:A-3')).body.grade_level).toBe(7);

    // Events for the changed items only, each with its feed position.
    const events = (await eventsOf(server, orgId)).slice(before);
    expect(events.map((e) => [e.type, e.data.external_id])).toEqual([
      ['student.updated', 'A-3'],
      ['student.updated', 'A-2'],
      ['student.created', 'A-4'],
    ]);
    // Consecutive positions in item order, as each item's change was made.
    const at = events[0]!.position as number;
    expect(events.map((e) => e.position)).toEqual([at, at + 1, at + 2]);
    expect(events[1]!.previous_attributes).toMatchObject({ last_name: 'A-2' });
  });

  it('a new record may take the student_number an earlier item of the batch gave up', async () => {
    expect((await batch('/v1/students/batch', [student('SW-1')])).body.counts.created).toBe(1);
    const res = await batch('/v1/students/batch', [
      { external_id: 'SW-1', student_number: 'N-SW-1-renumbered' },
      student('SW-2', { student_number: 'N-SW-1' }),
    ]);
    expect(res.status).toBe(200);
    expect(res.body.data.map((r) => r.status)).toEqual(['updated', 'created']);
    expect((await raw.get<Row>('/v1/students/ext:SW-2')).body.student_number).toBe('N-SW-1');
  });

  it('an item a rule refuses fails alone, with its problem and paths into the batch', async () => {
    await batch('/v1/students/batch', [student('B-1')]);
    const res = await batch('/v1/students/batch', [
      student('B-2'),
      { external_id: 'B-3', first_name: 'No last name' },
      student('B-4', { student_number: 'N-B-1' }),
      { external_id: 'B-1', student_number: 'N-B-2' },
      student('B-5'),
    ]);
    expect(res.status).toBe(200);
    expect(res.body.data.map((r) => r.status)).toEqual([
      'created',
      'failed',
      'failed',
      'failed',
      'created',
    ]);
    const [, missing, taken, takenOnUpdate] = res.body.data;
    expect(missing!.error).toMatchObject({ status: 400, code: 'validation_error' });
    expect(missing!.error!.errors.map((e) => e.path)).toEqual([
      'body.items.1.student_number',
      'body.items.1.last_name',
    ]);
    expect(taken!.error).toMatchObject({ status: 409, code: 'conflict' });
    expect(taken!.error!.errors.map((e) => e.path)).toEqual(['body.items.2.student_number']);
    // B-1 would take B-2's number (created earlier in this very batch): refused, B-1 unchanged.
    expect(takenOnUpdate!.error!.errors.map((e) => e.path)).toEqual([
      'body.items.3.student_number',
    ]);
    expect((await raw.get<Row>('/v1/students/ext:B-1')).body.student_number).toBe('N-B-1');
    expect(await count('external_id=B-3,B-4')).toBe(0);
    expect(res.body.counts).toEqual({ created: 2, updated: 0, unchanged: 0, failed: 3 });
  });

  it.each([
    [
      'two items with one external id',
      [student('C-1'), student('C-1')],
      'body.items.1.external_id',
    ],
    [
      'a field of the wrong type',
      [student('C-2'), student('C-3', { grade_level: 'x' })],
      'body.items.1.grade_level',
    ],
    [
      'an item without external_id',
      [{ student_number: 'C-4', first_name: 'A', last_name: 'B' }],
      'body.items.0.external_id',
    ],
    ['an unknown field', [student('C-5', { nickname: 'x' })], 'body.items.0.nickname'],
    ['no items', [], 'body.items'],
    ['1,001 items', Array.from({ length: 1001 }, (_, i) => student(`C-${i + 10}`)), 'body.items'],
  ])('a body with %s is a 400 naming it, and writes nothing', async (_, items, path) => {
    const before = (await eventsOf(server, orgId)).length;
    const res = await batch('/v1/students/batch', items);
    expect(res.status).toBe(400);
    expect(res.body.errors?.map((e) => e.path)).toContain(path);
    expect((await eventsOf(server, orgId)).length).toBe(before);
    expect(await count('external_id=C-1,C-2,C-3,C-5,C-10')).toBe(0);
  });

  it('takes 1,000 items in one request, each stored and announced as it reads back', async () => {
    const items = Array.from({ length: 1000 }, (_, i) =>
      student(`K-${i}`, i % 2 ? { grade_level: i % 12 } : {}),
    );
    const res = await batch('/v1/students/batch', items);
    expect(res.status).toBe(200);
    expect(res.body.counts.created).toBe(1000);
    const total = await raw.get<{ meta: { total: number } }>('/v1/students?external_id=K-0,K-999');
    expect(total.body.meta.total).toBe(2);

    // Half changed: written back as one statement (PostgreSQL: one array per column).
    const before = (await eventsOf(server, orgId)).length;
    const changed = items.map((item, i) =>
      i < 500 ? { ...item, last_name: `Changed ${i}` } : item,
    );
    const again = await batch('/v1/students/batch', changed);
    expect(again.body.counts).toEqual({ created: 0, updated: 500, unchanged: 500, failed: 0 });
    for (const index of [1, 2, 999]) {
      const { id } = again.body.data[index]!;
      const record = (await raw.get<Row>(`/v1/students/${id}`)).body;
      expect(record).toMatchObject({
        external_id: `K-${index}`,
        last_name: index < 500 ? `Changed ${index}` : `K-${index}`,
        grade_level: index % 2 ? index % 12 : null,
      });
      if (index < 500) {
        const event = (await eventsOf(server, orgId))
          .slice(before)
          .find((e) => (e.data as Row).id === id)!;
        expect(event.type).toBe('student.updated');
        expect(event.data).toEqual(record);
      }
    }
  });

  it('an Idempotency-Key covers the whole batch: the retry replays, nothing runs twice', async () => {
    const items = [student('D-1'), student('D-2')];
    const key = { 'Idempotency-Key': 'batch-d-1' };
    const first = await batch('/v1/students/batch', items, key);
    const before = (await eventsOf(server, orgId)).length;
    const again = await batch('/v1/students/batch', items, key);
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expect((await eventsOf(server, orgId)).length).toBe(before);
  });

  it('concurrent batches creating one external id: one record, the others update or leave it', async () => {
    const results = await Promise.all(
      ['E', 'F', 'G', 'H'].map((name) =>
        batch('/v1/students/batch', [
          student('RACE', { student_number: 'N-RACE', first_name: name }),
        ]),
      ),
    );
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    const statuses = results.map((r) => r.body.data[0]!.status);
    expect(statuses.filter((s) => s === 'created')).toHaveLength(1);
    expect(statuses.every((s) => ['created', 'updated', 'unchanged'].includes(s))).toBe(true);
    expect(await count('external_id=RACE')).toBe(1);
    expect(new Set(results.map((r) => r.body.data[0]!.id)).size).toBe(1);
  });

  it('courses: the create and update rules apply per item', async () => {
    const res = await batch('/v1/courses/batch', [
      { external_id: 'class-1', code: 'CB-1', title: 'Algebra', capacity: 2 },
      {
        external_id: 'class-2',
        code: 'CB-2',
        title: 'Late',
        start_date: '2026-09-01',
        end_date: '2026-01-01',
      },
    ]);
    expect(res.body.data.map((r) => r.status)).toEqual(['created', 'failed']);
    expect(res.body.data[1]!.error!.errors.map((e) => e.path)).toEqual(['body.items.1.end_date']);
    const update = await batch('/v1/courses/batch', [
      { external_id: 'class-1', end_date: '2026-01-01', start_date: '2026-09-01' },
      { external_id: 'class-1b', code: 'CB-1', title: 'Taken code' },
    ]);
    expect(update.body.data.map((r) => r.status)).toEqual(['failed', 'failed']);
    expect((await raw.get<Row>('/v1/courses/ext:class-1')).body.start_date).toBeNull();
  });

  it('costs 20 of the rate limit and needs the write scope', async () => {
    const fresh = (await server.createOrganization()).id;
    const writer = (await server.createToken(fresh, ['students:write'])).token;
    const reader = (await server.createToken(fresh, ['students:read'])).token;
    const send = (t: string) =>
      rawCall(server, '/v1/students/batch', {
        token: t,
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ items: [student('R-1')] }),
      });
    const res = await send(writer);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-ratelimit-remaining')).toBe('580');
    expect((await send(reader)).status).toBe(403);
  });

  it('validates a batch once, though the rate limit checks it first to price it', async () => {
    const body = contract.students.batchUpsert.body;
    const runs = jest.spyOn(body, '_parse');
    try {
      const items = Array.from({ length: 3 }, (_, i) => student(`P-${i}`));
      expect((await batch('/v1/students/batch', items)).status).toBe(200);
      expect(runs).toHaveBeenCalledTimes(1);
      runs.mockClear();
      const invalid = await batch('/v1/students/batch', [{ ...items[0], grade_level: 'one' }]);
      expect(invalid.status).toBe(400);
      expect(runs).toHaveBeenCalledTimes(1);
    } finally {
      runs.mockRestore();
    }
  });
});
