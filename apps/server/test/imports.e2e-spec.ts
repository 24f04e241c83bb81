import type { Import } from '@platform/contract';
import { batchCaller } from './support/batch';
import { errorReport, finished, imported, ndjsonOf, upload } from './support/imports';
import { eventsOf, problemOf, rawClient, startServer, type TestServer } from './support/server';

type Row = { id: string; external_id: string | null; status: string; [field: string]: unknown };

describe('SIS imports (POST /v1/imports)', () => {
  let server: TestServer;
  let orgId: string;
  let token: string;
  let raw: ReturnType<typeof rawClient>;

  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(() => server.close());

  beforeEach(async () => {
    orgId = (await server.createOrganization()).id;
    ({ token } = await server.createToken(orgId, ['all']));
    raw = rawClient(server, token);
  });

  const student = (key: string, extra: object = {}) => ({
    external_id: key,
    student_number: `N-${key}`,
    first_name: 'Ada',
    last_name: key,
    ...extra,
  });
  const students = async () => {
    const rows: Row[] = [];
    for (let page = 1; ; page += 1) {
      const res = await raw.get<{ data: Row[] }>(`/v1/students?per_page=100&page=${page}`);
      rows.push(...res.body.data);
      if (res.body.data.length < 100) return rows;
    }
  };
  const byExternalId = async () =>
    new Map((await students()).map((s) => [s.external_id ?? s.id, s]));
  const seed = (items: object[]) => batchCaller(server, token)('/v1/students/batch', items);

  it('creates and updates by external_id, and the same file again changes nothing', async () => {
    await seed([student('S-1')]);
    const file = ndjsonOf([
      student('S-1', { first_name: 'Changed' }),
      student('S-2'),
      student('S-3'),
    ]);
    const first = await imported(server, token, 'collection=students', file);
    expect(first).toMatchObject({
      object: 'import',
      collection: 'students',
      mode: 'upsert',
      format: 'ndjson',
      status: 'succeeded',
      rows: 3,
      rows_processed: 3,
      counts: { created: 2, updated: 1, unchanged: 0, failed: 0, withdrawn: 0, skipped: 0 },
      error: null,
    });
    expect(first.completed_at).not.toBeNull();
    const got = await raw.get<Row>('/v1/students/ext:S-1');
    expect(got.body.first_name).toBe('Changed');
    const eventsBefore = (await eventsOf(server, orgId)).length;

    const again = await imported(server, token, 'collection=students', file);
    expect(again.id).not.toBe(first.id);
    expect(again.counts).toEqual({
      created: 0,
      updated: 0,
      unchanged: 3,
      failed: 0,
      withdrawn: 0,
      skipped: 0,
    });
    expect((await students()).length).toBe(3);
    expect((await eventsOf(server, orgId)).length).toBe(eventsBefore);
  });

  it('reads CSV by its header: numbers and booleans as their fields, empty cells left alone', async () => {
    const csv = [
      'external_id,code,title,capacity,status',
      'C-1,MATH-1,"Algebra, part 1",30,active',
      'C-2,BIO-1,Biology,,draft',
      'C-3,CHEM-1,Chemistry,lots,active',
      '',
    ].join('\r\n');
    const done = await imported(server, token, 'collection=courses', csv, {
      type: 'text/csv',
      name: 'courses.csv',
    });
    expect(done).toMatchObject({ format: 'csv', rows: 3, status: 'succeeded' });
    expect(done.counts).toMatchObject({ created: 2, failed: 1 });
    const c1 = await raw.get<Row>('/v1/courses/ext:C-1');
    expect(c1.body).toMatchObject({ title: 'Algebra, part 1', capacity: 30, status: 'active' });
    const report = await errorReport(server, token, done.id);
    expect(report.status).toBe(200);
    expect(report.contentType).toMatch(/^text\/csv/);
    expect(report.rows).toEqual([
      expect.objectContaining({ row: '3', external_id: 'C-3', field: 'capacity' }),
    ]);
  });

  it('reports each refused row with its number and field, and applies the rest', async () => {
    await seed([student('T-1'), student('T-2')]);
    const file = [
      JSON.stringify(student('R-1')),
      '{not json',
      JSON.stringify({ first_name: 'No key' }),
      JSON.stringify(student('R-4', { email: 'not an email' })),
      // A rule the row meets only against the database: T-1's student number is taken.
      JSON.stringify(student('R-5', { student_number: 'N-T-1' })),
      JSON.stringify(student('R-6')),
    ].join('\n');
    const done = await imported(server, token, 'collection=students', file);
    expect(done.rows).toBe(6);
    expect(done.counts).toMatchObject({ created: 2, failed: 4 });
    const report = await errorReport(server, token, done.id);
    expect(report.rows.map((r) => [r.row, r.external_id, r.field])).toEqual([
      ['2', '', ''],
      ['3', '', 'external_id'],
      ['4', 'R-4', 'email'],
      ['5', 'R-5', 'student_number'],
    ]);
    expect(report.rows[0]!.problem).toMatch(/not valid JSON/);
    const present = await byExternalId();
    expect([...present.keys()].sort()).toEqual(['R-1', 'R-6', 'T-1', 'T-2']);
  });

  it('full mode withdraws the records with an external_id the file leaves out, nothing else', async () => {
    await seed([
      student('F-1'),
      student('F-2'),
      student('F-3'),
      student('F-4', { status: 'graduated' }),
    ]);
    const manual = await raw.post<Row>('/v1/students', {
      student_number: 'M-1',
      first_name: 'Hand',
      last_name: 'Made',
    });
    expect(manual.status).toBe(201);
    const eventsBefore = (await eventsOf(server, orgId)).length;
    const file = ndjsonOf([student('F-1'), student('F-2'), student('F-5')]);
    const done = await imported(
      server,
      token,
      'collection=students&mode=full&change_threshold=0.5',
      file,
    );
    expect(done).toMatchObject({ status: 'succeeded', mode: 'full' });
    expect(done.counts).toEqual({
      created: 1,
      updated: 0,
      unchanged: 2,
      failed: 0,
      withdrawn: 1,
      skipped: 0,
    });
    const after = await byExternalId();
    expect(after.get('F-3')!.status).toBe('withdrawn');
    // Graduated is not a state a full import withdraws from; a record without an external_id
    // is not the SIS's.
    expect(after.get('F-4')!.status).toBe('graduated');
    expect(after.get(manual.body.id)!.status).toBe('active');
    const events = (await eventsOf(server, orgId)).slice(eventsBefore).map((e) => e.type);
    expect(events.sort()).toEqual(['student.created', 'student.updated']);
  });

  it('full mode past its change_threshold writes nothing until confirmed', async () => {
    await seed([student('H-1'), student('H-2'), student('H-3'), student('H-4')]);
    const file = ndjsonOf([student('H-1', { first_name: 'Kept' })]);
    const refused = await imported(server, token, 'collection=students&mode=full', file);
    expect(refused.status).toBe('failed');
    expect(refused.error).toMatch(/withdraw 3 of the 4 students .*75\.0%.*confirm=true/);
    expect(refused.counts).toEqual({
      created: 0,
      updated: 0,
      unchanged: 0,
      failed: 0,
      withdrawn: 0,
      skipped: 0,
    });
    const untouched = await byExternalId();
    expect([...untouched.values()].map((s) => s.status)).toEqual([
      'active',
      'active',
      'active',
      'active',
    ]);
    expect(untouched.get('H-1')!.first_name).toBe('Ada');

    const confirmed = await imported(
      server,
      token,
      'collection=students&mode=full&confirm=true',
      file,
    );
    expect(confirmed).toMatchObject({ status: 'succeeded', confirmed: true });
    expect(confirmed.counts).toMatchObject({ updated: 1, withdrawn: 3 });
  });

  it('full mode refuses a file with a row that names no record, before writing anything', async () => {
    await seed([student('U-1'), student('U-2')]);
    const file = `${JSON.stringify(student('U-1', { first_name: 'New' }))}\n{"first_name":"who?"}\n`;
    const done = await imported(server, token, 'collection=students&mode=full&confirm=true', file);
    expect(done.status).toBe('failed');
    expect(done.error).toMatch(/1 rows have no readable external_id/);
    const after = await byExternalId();
    expect(after.get('U-1')!.first_name).toBe('Ada');
    expect(after.get('U-2')!.status).toBe('active');
  });

  it('a dry run reports what would happen and writes nothing', async () => {
    await seed([student('D-1'), student('D-2'), student('D-3')]);
    const eventsBefore = (await eventsOf(server, orgId)).length;
    const file = ndjsonOf([
      student('D-1', { first_name: 'Would change' }),
      student('D-2'),
      student('D-9'),
      student('D-8', { email: 'bad' }),
    ]);
    const done = await imported(
      server,
      token,
      'collection=students&mode=full&dry_run=true&confirm=true',
      file,
    );
    expect(done).toMatchObject({ status: 'succeeded', dry_run: true });
    expect(done.counts).toEqual({
      created: 1,
      updated: 1,
      unchanged: 1,
      failed: 1,
      withdrawn: 1,
      skipped: 0,
    });
    const after = await byExternalId();
    expect([...after.keys()].sort()).toEqual(['D-1', 'D-2', 'D-3']);
    expect(after.get('D-1')!.first_name).toBe('Ada');
    expect(after.get('D-3')!.status).toBe('active');
    expect((await eventsOf(server, orgId)).length).toBe(eventsBefore);
    expect((await errorReport(server, token, done.id)).rows).toHaveLength(1);
  });

  it('full mode drops the live enrollments a file leaves out', async () => {
    await seed([student('E-S1')]);
    const course = await raw.post<Row>('/v1/courses', { code: 'E-C', title: 'E', capacity: 10 });
    const base = { student_id: 'ext:E-S1', course_id: course.body.id };
    const first = await imported(
      server,
      token,
      'collection=enrollments',
      ndjsonOf([{ external_id: 'E-1', ...base, status: 'active' }]),
    );
    expect(first.counts).toMatchObject({ created: 1 });
    const done = await imported(server, token, 'collection=enrollments&mode=full&confirm=true', '');
    expect(done).toMatchObject({ status: 'succeeded', rows: 0 });
    expect(done.counts.withdrawn).toBe(1);
    expect((await raw.get<Row>('/v1/enrollments/ext:E-1')).body.status).toBe('dropped');
  });

  it('works through a file of many chunks, with its progress', async () => {
    const rows = Array.from({ length: 2500 }, (_, i) => student(`P-${i}`));
    const res = await upload(server, token, 'collection=students', ndjsonOf(rows));
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ status: 'queued', rows: 2500 });
    const done = await finished(server, token, res.body.id);
    expect(done).toMatchObject({ rows_processed: 2500, counts: { created: 2500 } });
    expect((await students()).length).toBe(2500);
    const listed = await raw.get<{ data: Import[] }>('/v1/imports?status=succeeded');
    expect(listed.body.data.map((i) => i.id)).toEqual([res.body.id]);
  });

  it('an Idempotency-Key replays its import for the same file and refuses another file', async () => {
    const headers = { 'Idempotency-Key': `imp-${orgId}` };
    const file = ndjsonOf([student('K-1')]);
    const first = await upload(server, token, 'collection=students', file, { headers });
    expect(first.status).toBe(202);
    const repeat = await upload(server, token, 'collection=students', file, { headers });
    expect(repeat.status).toBe(202);
    expect(repeat.headers.get('idempotent-replayed')).toBe('true');
    expect(repeat.body.id).toBe(first.body.id);
    const other = await upload(server, token, 'collection=students', ndjsonOf([student('K-2')]), {
      headers,
    });
    expect(problemOf(other).status).toBe(409);
    await finished(server, token, first.body.id);
    const listed = await raw.get<{ data: Import[] }>('/v1/imports');
    expect(listed.body.data).toHaveLength(1);
    expect([...(await byExternalId()).keys()]).toEqual(['K-1']);
  });

  it('refuses what it cannot take, saying what is wrong', async () => {
    const notMultipart = await raw.post('/v1/imports?collection=students', { rows: [] });
    expect(problemOf(notMultipart)).toMatchObject({ status: 415 });
    const noFormat = await upload(server, token, 'collection=students', '{}', {
      type: 'application/octet-stream',
      name: 'rows.bin',
    });
    expect(problemOf(noFormat).errors?.[0]?.path).toBe('query.format');
    const payments = await upload(server, token, 'collection=payments&mode=full', '');
    expect(problemOf(payments).errors?.[0]?.path).toBe('query.mode');
    const unknown = await upload(server, token, 'collection=teachers', '');
    expect(problemOf(unknown).errors?.[0]?.path).toBe('query.collection');
    const badCsv = await upload(server, token, 'collection=students', 'a,b\n"x,1\n', {
      type: 'text/csv',
      name: 'bad.csv',
    });
    expect(problemOf(badCsv).detail).toMatch(/The CSV file cannot be read/);
    const form = new FormData();
    const noFile = await fetch(`${server.url}/v1/imports?collection=students`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}` },
      body: form,
    });
    expect(noFile.status).toBe(400);
    expect(((await noFile.json()) as { detail: string }).detail).toMatch(/no part named 'file'/);
    const options = new FormData();
    options.append('file', new Blob(['{}'], { type: 'application/x-ndjson' }), 'rows.ndjson');
    options.append('mode', 'full');
    const withField = await fetch(`${server.url}/v1/imports?collection=students`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}` },
      body: options,
    });
    expect(withField.status).toBe(400);
    expect(await withField.json()).toMatchObject({
      errors: [{ path: 'body.mode', code: 'unknown_parameter' }],
    });
    const noBoundary = await raw.post('/v1/imports?collection=students', undefined);
    expect(noBoundary.status).toBe(415);
    const badBoundary = await fetch(`${server.url}/v1/imports?collection=students`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'multipart/form-data' },
      body: 'x',
    });
    expect(badBoundary.status).toBe(400);
    // None of these left an import behind.
    expect((await raw.get<{ data: Import[] }>('/v1/imports')).body.data).toHaveLength(0);
  });

  it("needs the collection's write scope besides imports:write, and stays in its organization", async () => {
    const { token: narrow } = await server.createToken(orgId, ['imports:write', 'imports:read']);
    const refused = await upload(server, narrow, 'collection=students', ndjsonOf([student('Z')]));
    expect(problemOf(refused)).toMatchObject({ status: 403, code: 'insufficient_scope' });
    expect(problemOf(refused).detail).toMatch(/students:write/);

    const done = await imported(server, token, 'collection=students', ndjsonOf([student('Z')]));
    const otherOrg = (await server.createOrganization()).id;
    const { token: stranger } = await server.createToken(otherOrg, ['all']);
    const peek = await rawClient(server, stranger).get(`/v1/imports/${done.id}`);
    expect(problemOf(peek).status).toBe(404);
    const report = await fetch(`${server.url}/v1/imports/${done.id}/errors`, {
      headers: { Authorization: `Bearer ${stranger}` },
    });
    expect(report.status).toBe(404);
  });
});
