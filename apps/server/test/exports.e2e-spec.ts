import { createHash } from 'node:crypto';
import {
  type CollectionChecksums,
  contract,
  type Export,
  EXPORT_COLLECTIONS,
  ExportSchema,
  resourceContractKey,
  StudentSchema,
} from '@platform/contract';
import { expectStatus, typedClient, type TypedClient } from './support/api';
import { problemOf, rawClient, startServer, type TestServer } from './support/server';

/** Polls an export until it leaves queued/running. */
async function finished(raw: ReturnType<typeof rawClient>, id: string): Promise<Export> {
  for (let i = 0; i < 600; i += 1) {
    const res = await raw.get<Export>(`/v1/exports/${id}`);
    expect(res.status).toBe(200);
    if (res.body.status !== 'queued' && res.body.status !== 'running') return res.body;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`export ${id} did not finish`);
}

/** The file as its bytes' text (rawCall would parse `application/x-ndjson` as one JSON). */
async function download(server: TestServer, token: string, id: string) {
  const res = await fetch(`${server.url}/v1/exports/${id}/file`, {
    headers: { Authorization: `Bearer ${token}` },
  });
  return { status: res.status, headers: res.headers, body: await res.text() };
}

function ndjson(text: string): Record<string, unknown>[] {
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

function checksum(records: { id: string; updated_at: string }[]): string {
  const hash = createHash('sha256');
  for (const r of [...records].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)))
    hash.update(`${r.id}\t${r.updated_at}\n`);
  return hash.digest('hex');
}

async function allStudents(api: TypedClient) {
  const rows: { id: string; updated_at: string; status: string }[] = [];
  for (let page = 1; ; page += 1) {
    const res = expectStatus(await api.students.list({ query: { page, per_page: 100 } }), 200);
    rows.push(...res.body.data);
    if (res.body.data.length < 100) return rows;
  }
}

describe('Exports', () => {
  let server: TestServer;
  let orgId: string;
  let api: TypedClient;
  let raw: ReturnType<typeof rawClient>;
  let token: string;

  beforeAll(async () => {
    server = await startServer({ EXPORT_RETENTION: '3s' });
    orgId = (await server.createOrganization()).id;
    ({ token } = await server.createToken(orgId, ['all']));
    api = typedClient(server, token);
    raw = rawClient(server, token);
    await server.insertStudents(orgId, 250);
    expectStatus(
      await api.students.create({
        body: {
          student_number: 'Q-1',
          first_name: 'Zoë, "the" first',
          last_name: 'Line\nbreak',
          status: 'inactive',
        },
      }),
      201,
    );
  });
  afterAll(() => server.close());

  it('exports a collection as NDJSON: 202, then the file (no-store) holds exactly the records the list shows', async () => {
    const created = await raw.post<Export>('/v1/exports', { collection: 'students' });
    expect(created.status).toBe(202);
    expect(ExportSchema.safeParse(created.body).success).toBe(true);
    expect(created.body).toMatchObject({ object: 'export', format: 'ndjson', filters: {} });
    expect(created.body.id).toMatch(/^exp_/);
    const done = await finished(raw, created.body.id);
    expect(done).toMatchObject({ status: 'succeeded', row_count: 251 });
    expect(done.cursor).toEqual(expect.any(String));
    expect(Date.parse(done.expires_at!) - Date.parse(done.completed_at!)).toBe(3000);

    const file = await download(server, token, done.id);
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toBe('application/x-ndjson');
    expect(Number(file.headers.get('content-length'))).toBe(done.size_bytes);
    // Student data: never kept in a browser or proxy cache.
    expect(file.headers.get('cache-control')).toBe('private, no-store');
    expect(file.headers.get('referrer-policy')).toBe('no-referrer');
    const exported = ndjson(file.body);
    const listed = await allStudents(api);
    expect(new Set(exported.map((r) => JSON.stringify(r)))).toEqual(
      new Set(listed.map((r) => JSON.stringify(r))),
    );

    // Listed, and the creation is in the audit log.
    const list = expectStatus(await api.exports.list(), 200);
    expect(list.body.data.map((e) => e.id)).toContain(done.id);
    const audit = expectStatus(
      await api.auditEvents.list({ query: { action: 'export.created' } }),
      200,
    );
    expect(audit.body.data[0]).toMatchObject({ target: { type: 'export', id: done.id } });
  });

  it('exports and checksums every collection the resource registry marks exported, as the API lists it', async () => {
    const org = (await server.createOrganization()).id;
    const own = rawClient(server, (await server.createToken(org, ['all'])).token);
    await server.insertStudents(org, 3);
    const sums = await own.get<CollectionChecksums>('/v1/collections/checksums');
    expect(sums.body.data.map((d) => d.collection)).toEqual(EXPORT_COLLECTIONS);
    for (const collection of EXPORT_COLLECTIONS) {
      const created = await own.post<Export>('/v1/exports', { collection });
      expect(created.status).toBe(202);
      const done = await finished(own, created.body.id);
      expect(done).toMatchObject({ collection, status: 'succeeded' });
      const { path: listPath } = contract[resourceContractKey(collection)].list;
      const listed = await own.get<{ data: { id: string; updated_at: string }[] }>(listPath);
      expect(done.row_count).toBe(listed.body.data.length);
      const sum = sums.body.data.find((d) => d.collection === collection);
      expect(sum).toEqual({
        collection,
        count: listed.body.data.length,
        checksum: checksum(listed.body.data),
      });
    }
  });

  it('exports CSV with the list filters, quoting what needs it', async () => {
    const created = await raw.post<Export>('/v1/exports', {
      collection: 'students',
      format: 'csv',
      filters: { status: 'inactive' },
    });
    expect(created.status).toBe(202);
    const done = await finished(raw, created.body.id);
    expect(done.row_count).toBe(
      (await allStudents(api)).filter((s) => s.status === 'inactive').length,
    );
    const file = await download(server, token, done.id);
    expect(file.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    const text = file.body;
    expect(text.split('\r\n')[0]).toBe(
      // The header is the resource's fields, in the contract's order.
      Object.keys(StudentSchema.shape).join(','),
    );
    expect(text).toContain('"Zoë, ""the"" first","Line\nbreak"');
  });

  it('neutralises CSV cells a spreadsheet would run as formulas, and leaves NDJSON as it is', async () => {
    const org = await server.createOrganization();
    const { token: own } = await server.createToken(org.id, ['all']);
    const ownRaw = rawClient(server, own);
    const names = [
      ['=HYPERLINK("https://evil.test","x")', '@SUM(1+1)', '+cmd|calc'],
      ['-2+3', '\tTabbed', '\rReturned'],
    ];
    for (const [i, [first_name, last_name, preferred_name]] of names.entries()) {
      const made = await ownRaw.post('/v1/students', {
        student_number: `F-${i}`,
        first_name,
        last_name,
        preferred_name,
      });
      expect(made.status).toBe(201);
    }
    const exported = async (format: string) => {
      const created = await ownRaw.post<Export>('/v1/exports', {
        collection: 'students',
        format,
      });
      expect(created.status).toBe(202);
      const done = await finished(ownRaw, created.body.id);
      return (await download(server, own, done.id)).body;
    };
    const rows = (await exported('csv')).split('\r\n');
    expect(rows[1]).toContain(`"'=HYPERLINK(""https://evil.test"",""x"")",'@SUM(1+1),'+cmd|calc,`);
    expect(rows[2]).toContain(`,'-2+3,'\tTabbed,"'\rReturned",`);
    const records = ndjson(await exported('ndjson'));
    expect(records.map((r) => [r.first_name, r.last_name, r.preferred_name])).toEqual(names);
  });

  it('replays a create sent again with the same Idempotency-Key, and runs it once', async () => {
    const send = () =>
      fetch(`${server.url}/v1/exports`, {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${token}`,
          'Content-Type': 'application/json',
          'Idempotency-Key': 'export-once',
        },
        body: JSON.stringify({ collection: 'courses' }),
      }).then(async (res) => ({ status: res.status, body: (await res.json()) as Export }));
    const first = await send();
    const again = await send();
    expect(first.status).toBe(202);
    expect(again).toEqual(first);
    expect((await finished(raw, first.body.id)).status).toBe('succeeded');
  });

  it('refuses bad input with a problem naming the field', async () => {
    const cases: [unknown, string][] = [
      [{ collection: 'pets' }, 'body.collection'],
      [{ collection: 'students', format: 'xml' }, 'body.format'],
      [{ collection: 'students', filters: { per_page: '10' } }, 'body.filters.per_page'],
      [{ collection: 'students', filters: { status: 'asleep' } }, 'body.filters.status'],
      [{ collection: 'students', filters: { colour: 'red' } }, 'body.filters.colour'],
      [{ collection: 'students', extra: 1 }, 'body.extra'],
    ];
    for (const [body, path] of cases) {
      const res = await raw.post('/v1/exports', body);
      expect(res.status).toBe(400);
      expect(problemOf(res).errors?.map((e) => e.path)).toContain(path);
    }
    const missing = await raw.get('/v1/exports/exp_01JA0000000000000000000000/file');
    expect(missing.status).toBe(404);
  });

  it("needs the collection's read scope, and never shows another organization's exports", async () => {
    const created = await raw.post<Export>('/v1/exports', { collection: 'students' });
    const coursesOnly = rawClient(
      server,
      (await server.createToken(orgId, ['courses:read', 'exports:read', 'exports:write'])).token,
    );
    const refused = await coursesOnly.post('/v1/exports', { collection: 'students' });
    expect(refused.status).toBe(403);
    expect(problemOf(refused).code).toBe('insufficient_scope');
    expect((await coursesOnly.get(`/v1/exports/${created.body.id}`)).status).toBe(404);
    expect((await coursesOnly.get(`/v1/exports/${created.body.id}/file`)).status).toBe(404);
    const visible = (await coursesOnly.get<{ data: Export[] }>('/v1/exports')).body.data;
    expect(visible.map((e) => e.collection)).not.toContain('students');
    const courses = await coursesOnly.post<Export>('/v1/exports', { collection: 'courses' });
    expect(courses.status).toBe(202);

    const other = (await server.createOrganization({ name: 'Other' })).id;
    const stranger = rawClient(server, (await server.createToken(other, ['all'])).token);
    expect((await stranger.get(`/v1/exports/${created.body.id}`)).status).toBe(404);
    expect((await stranger.get(`/v1/exports/${created.body.id}/file`)).status).toBe(404);
    expect((await stranger.get<{ data: Export[] }>('/v1/exports')).body.data).toEqual([]);
    await finished(raw, created.body.id);
  });

  it('counts and checksums collections in one snapshot, as a client can recompute them', async () => {
    const res = await raw.get<CollectionChecksums>(
      '/v1/collections/checksums?collections=students,courses',
    );
    expect(res.status).toBe(200);
    const students = await allStudents(api);
    expect(res.body).toMatchObject({
      object: 'collection_checksums',
      algorithm: 'sha256-id-updated-at-v1',
      cursor: expect.any(String),
      data: [
        { collection: 'students', count: students.length, checksum: checksum(students) },
        { collection: 'courses', count: 0, checksum: checksum([]) },
      ],
    });
    const bad = await raw.get('/v1/collections/checksums?collections=students,pets');
    expect(bad.status).toBe(400);
    expect(problemOf(bad).errors?.[0]?.path).toBe('query.collections');
    const coursesOnly = rawClient(
      server,
      (await server.createToken(orgId, ['courses:read', 'exports:read', 'exports:write'])).token,
    );
    expect((await coursesOnly.get('/v1/collections/checksums?collections=students')).status).toBe(
      403,
    );
    const mine = await coursesOnly.get<CollectionChecksums>('/v1/collections/checksums');
    expect(mine.body.data.map((d: { collection: string }) => d.collection)).toEqual(['courses']);
  });

  it('expires: after the retention the file is gone and the export says so', async () => {
    const created = await raw.post<Export>('/v1/exports', { collection: 'students' });
    const done = await finished(raw, created.body.id);
    expect(done.status).toBe('succeeded');
    await new Promise((resolve) => setTimeout(resolve, 3_200));
    expect((await raw.get<Export>(`/v1/exports/${done.id}`)).body).toMatchObject({
      status: 'expired',
      size_bytes: null,
    });
    const file = await raw.get(`/v1/exports/${done.id}/file`);
    expect(file.status).toBe(409);
    expect(problemOf(file).detail).toContain('expired');
    // The sweep deletes the file's chunks.
    const param = server.config.database.type === 'postgres' ? '$1' : '?';
    for (let i = 0; i < 100; i += 1) {
      const [row] = await server.dataSource.query(
        `SELECT COUNT(*) AS n FROM export_chunks WHERE export_id = ${param}`,
        [done.id],
      );
      if (Number(row.n) === 0) return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error('the expired export kept its file');
  });
});
