/**
 * The mirror end to end against a real server on loopback, into SQLite (`pnpm test`) or
 * PostgreSQL (`pnpm test:postgres`): the snapshot and the feed while writers keep writing, a
 * SIGKILL of the mirror mid-follow, a restart, a SIGTERM that ends it cleanly, and `--verify`
 * clean. Then the copy is compared with the API row by row, every column.
 */
import { type Client, createClient } from '@platform/client';
import { startTestServer, type TestServer } from '@platform/server/testing';
import { ndjsonRecords } from '../src/loader';
import { collectionTable, MIRRORED_COLLECTIONS } from '../src/schema';
import { ensureTables, upsertRows, writeState } from '../src/tables';
import { freshMirrorDatabase, openMirror, runMirrorToEnd, startMirror } from './support';

jest.setTimeout(180_000);

let server: TestServer;
let sdk: Client;
let token: string;
let database: { url: string; drop(): Promise<void> };

beforeAll(async () => {
  server = await startTestServer({ postgresAdminUrl: process.env.TEST_DATABASE_URL });
  const organization = await server.createOrganization();
  ({ token } = await server.createToken(organization.id, ['all']));
  sdk = createClient({ baseUrl: server.url, token });
  const students = await server.insertStudents(organization.id, 1500);
  const course = await sdk.courses.create({ body: { code: 'SEED-1', title: 'Seed' } });
  const exam = await sdk.exams.create({
    body: { course_id: course.id, title: 'Midterm', max_score: 100 },
  });
  for (const student of students.slice(0, 20)) {
    const enrollment = await sdk.enrollments.create({
      body: { student_id: student.id, course_id: course.id, status: 'active' },
    });
    await sdk.payments.create({
      body: { student_id: student.id, enrollment_id: enrollment.id, amount: 1250, currency: 'EUR' },
    });
    await sdk.examResults.create({
      body: { exam_id: exam.id, student_id: student.id, score: 71.5 },
    });
  }
  database = await freshMirrorDatabase();
});

afterAll(async () => {
  await server?.close();
  await database?.drop();
});

/** Writes until stopped: students and courses created, updated and deleted, enrollments made. */
function startWriters(): { stop(): Promise<number> } {
  let stopped = false;
  let writes = 0;
  const students: string[] = [];
  const loop = async () => {
    const course = await sdk.courses.create({
      body: { code: `W-${Date.now()}`, title: 'Writers' },
    });
    for (let i = 0; !stopped; i += 1) {
      const student = await sdk.students.create({
        body: {
          student_number: `W${Date.now()}-${i}`,
          first_name: 'New',
          last_name: `Writer ${i}`,
        },
      });
      await sdk.students.update(student.id, {
        body: { first_name: `Renamed ${i}`, grade_level: i % 13 },
      });
      await sdk.courses.update(course.id, { body: { title: `Writers ${i}`, capacity: i + 10 } });
      // An enrolled student cannot be deleted; the others are, a few writes later.
      if (i % 4 === 0)
        await sdk.enrollments.create({ body: { student_id: student.id, course_id: course.id } });
      else students.push(student.id);
      if (i % 3 === 0 && students.length > 1) await sdk.students.delete(students.shift()!);
      writes += 4;
    }
  };
  const running = loop();
  return {
    async stop() {
      stopped = true;
      await running;
      return writes;
    },
  };
}

async function mirrorRows(table: string): Promise<Record<string, unknown>[]> {
  const db = await openMirror(database.url);
  try {
    return await db.all(`SELECT * FROM "${table}" ORDER BY "id"`);
  } finally {
    await db.close();
  }
}

/** A value as the mirror stores it, back in the API's terms. */
function asApi(kind: string, value: unknown): unknown {
  if (value === null) return null;
  if (kind === 'integer' || kind === 'real') return Number(value);
  return value;
}

it('mirrors while writers write, survives a SIGKILL mid-follow and a restart, and verifies clean', async () => {
  const args = [
    '--database',
    database.url,
    '--token',
    token,
    '--base-url',
    server.url,
    '--batch-size',
    '200',
  ];
  const writers = startWriters();

  // 1. Snapshot, then the feed; killed once it has applied changes from the feed.
  const first = startMirror(args);
  await first.waitFor(/students: snapshot loaded at cursor \d+\.[\w-]+/);
  await first.waitFor(/following the change feed after cursor \d+\.[\w-]+/);
  await first.waitFor(/[1-9][\d,]* changes applied/);
  first.child.kill('SIGKILL');
  expect(await first.exited).toBe('SIGKILL');
  expect(first.output()).toMatch(/students: [\d,]+ of 1,5\d\d rows loaded \([\d,]+ rows\/s\)/);

  // 2. A restart resumes from the stored cursors: no new export, the feed from where it was.
  const second = startMirror(args);
  await second.waitFor(/following the change feed after cursor \d+\.[\w-]+/);
  expect(second.output()).not.toMatch(/exporting/);
  await second.waitFor(/[1-9][\d,]* changes applied/);
  const writes = await writers.stop();
  expect(writes).toBeGreaterThan(20);

  // 3. SIGTERM: it commits the page under way and exits 0.
  second.child.kill('SIGTERM');
  expect(await second.exited).toBe(0);
  expect(second.output()).toMatch(/SIGTERM: stopping after the current transaction/);
  expect(second.output()).toMatch(/stopped at cursor \d+\.[\w-]+/);

  // 4. --verify: brought to the checksums' cursor, every collection matches.
  const verify = await runMirrorToEnd([...args, '--verify']);
  expect(verify.output).not.toMatch(/DIFFERS/);
  for (const collection of MIRRORED_COLLECTIONS)
    expect(verify.output).toMatch(new RegExp(`verify: ${collection} matches \\(\\d+ rows\\)`));
  expect(verify.code).toBe(0);

  // 5. Every column of every student and course is the API's (the checksum covers only
  // id and updated_at); deleted students are gone.
  for (const collection of ['students', 'courses'] as const) {
    const spec = collectionTable(collection);
    const fromApi: Record<string, unknown>[] = [];
    for await (const record of sdk[collection].listAll({ per_page: 100 }))
      fromApi.push(record as unknown as Record<string, unknown>);
    const rows = await mirrorRows(collection);
    expect(rows.map((row) => row.id)).toEqual(fromApi.map((record) => record.id).sort());
    const byId = new Map(fromApi.map((record) => [record.id, record]));
    for (const row of rows) {
      const record = byId.get(row.id)!;
      for (const column of spec.columns)
        expect([row.id, column.name, asApi(column.kind, row[column.name])]).toEqual([
          row.id,
          column.name,
          record[column.name],
        ]);
    }
  }
});

it('says which collection differs when the copy was changed by hand', async () => {
  const db = await openMirror(database.url);
  await db.run(`UPDATE "courses" SET "updated_at" = '2000-01-01T00:00:00.000Z'`);
  await db.close();
  const args = ['--database', database.url, '--token', token, '--base-url', server.url, '--verify'];
  const verify = await runMirrorToEnd(args);
  expect(verify.output).toMatch(
    /verify: courses DIFFERS at cursor \d+\.[\w-]+: the API has \d+ rows/,
  );
  expect(verify.output).toMatch(/verify: students matches/);
  expect(verify.output).toMatch(/error: verify: courses differs/);
  expect(verify.code).toBe(1);
});

it('resumes a load stopped half-way from the same export, after its last committed batch', async () => {
  const resumed = await freshMirrorDatabase();
  try {
    // What a SIGKILL during the load leaves: 700 rows of an export committed with its progress.
    const started = await sdk.exports.create({ body: { collection: 'students' } });
    const exported = await sdk.exports.wait(started.id, { intervalMs: 50 });
    const records = ndjsonRecords(
      (await sdk.exports.stream(exported.id)) as unknown as AsyncIterable<Uint8Array>,
    );
    const db = await openMirror(resumed.url);
    const spec = collectionTable('students');
    await ensureTables(db, [spec]);
    const firstRows: Record<string, unknown>[] = [];
    for await (const record of records) if (firstRows.length < 700) firstRows.push(record);
    await db.transaction(async (tx) => {
      await upsertRows(tx, db.dialect, spec, firstRows);
      await writeState(tx, db.dialect, {
        collection: 'students',
        cursor: exported.cursor,
        status: 'loading',
        export_id: exported.id,
        loaded_rows: 700,
      });
    });
    await db.close();

    const args = ['--database', resumed.url, '--token', token, '--base-url', server.url];
    const run = await runMirrorToEnd([...args, '--collections', 'students', '--once']);
    expect(run.output).toContain(`students: resuming export ${exported.id} after 700 rows`);
    expect(run.output).not.toMatch(/exporting/);
    expect(run.code).toBe(0);
    const verify = await runMirrorToEnd([...args, '--collections', 'students', '--verify']);
    expect(verify.output).toMatch(/verify: students matches/);
    expect(verify.code).toBe(0);
  } finally {
    await resumed.drop();
  }
});

it('loads a stopped load before asking for new exports, and fails on a file short of its count', async () => {
  const mirror = await freshMirrorDatabase();
  try {
    const started = await sdk.exports.create({ body: { collection: 'students' } });
    const exported = await sdk.exports.wait(started.id, { intervalMs: 50 });
    const db = await openMirror(mirror.url);
    await ensureTables(db, [collectionTable('students')]);
    await db.transaction((tx) =>
      writeState(tx, db.dialect, {
        collection: 'students',
        cursor: exported.cursor,
        status: 'loading',
        export_id: exported.id,
        loaded_rows: 0,
      }),
    );
    await db.close();
    // What a connection cut mid-file that the stream did not report looks like: one row short.
    await server.dataSource.query(
      `UPDATE exports SET row_count = row_count + 1 WHERE id = '${exported.id}'`,
    );

    const args = ['--database', mirror.url, '--token', token, '--base-url', server.url];
    const run = await runMirrorToEnd([...args, '--collections', 'students,courses', '--once']);
    expect(run.output).toContain(
      `students: export ${exported.id} holds ${(exported.row_count + 1).toLocaleString('en-US')} rows, its file gave ${exported.row_count.toLocaleString('en-US')}`,
    );
    // The resumed file was read first: no new export was asked for before it failed.
    expect(run.output).not.toMatch(/exporting/);
    expect(run.code).toBe(4);
  } finally {
    await mirror.drop();
  }
});
