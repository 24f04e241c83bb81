'use strict';
/**
 * Export benchmark: the real server exports BENCH_ROWS students (default 1,000,000) as NDJSON from
 * one snapshot into its file store, against a bare baseline in the same run that streams the same
 * rows, in the same order and the same format, from the same database into a file. Goals: at least
 * 100,000 rows/s, at least 0.7x the baseline, and the server's resident set grows by less than
 * 64 MB during the export.
 *
 *   pnpm --filter @platform/server build && BENCH_DATABASE=sqlite node bench/export.bench.js
 *   BENCH_DATABASE=postgres BENCH_POSTGRES_URL=postgres://… node bench/export.bench.js
 */
// Loopback only: this run and every process it starts refuse any other address (tooling/hermetic).
require('@platform/hermetic').enforceForRun();
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { StudentSchema } = require('@platform/contract');
const { envNumber, freePort, waitReady, writeResults } = require('./lib/harness');
const { studentInsert } = require('./lib/student-columns');
const { database, rssMb, runCli, startServer } = require('./lib/server-process');

const ROWS = envNumber('BENCH_ROWS', 1_000_000, { integer: true });
const DIALECT = process.env.BENCH_DATABASE === 'postgres' ? 'postgres' : 'sqlite';
const CHUNK = 1 << 20;
const GOALS = { rowsPerSecond: 100_000, ratio: 0.7, rssGrowthMb: 64 };
/** The exported fields (the contract's `StudentSchema`, `object` aside) and their columns. */
const FIELDS = Object.keys(StudentSchema.shape)
  .filter((field) => field !== 'object')
  .map((field) => [field, field]);

const log = (line) => console.log(line);

function iso(value) {
  if (value instanceof Date) return value.toISOString();
  return `${String(value).replace(' ', 'T')}Z`;
}

/** The same lines the server writes, from raw rows, into a file in 1 MiB pieces. */
function lineWriter(file) {
  const fd = fs.openSync(file, 'w');
  let pending = [];
  let size = 0;
  let rows = 0;
  return {
    add(row) {
      const resource = { id: row.id, object: 'student' };
      for (const [field, column] of FIELDS.slice(1)) {
        const value = row[column];
        resource[field] = field.endsWith('_at') ? iso(value) : (value ?? null);
      }
      const line = `${JSON.stringify(resource)}\n`;
      pending.push(line);
      size += line.length;
      rows += 1;
      if (size >= CHUNK) this.flush();
    },
    flush() {
      fs.writeSync(fd, Buffer.from(pending.join(''), 'utf8'));
      pending = [];
      size = 0;
    },
    end() {
      this.flush();
      fs.closeSync(fd);
      return rows;
    },
  };
}

/**
 * bulkStudents()' columns and SELECT list: the contract's columns (lib/student-columns.js), row
 * `i`'s values in SQL common to both databases, and `dialect`'s own (ids, numbers, timestamps).
 */
function bulkColumns(dialect) {
  return studentInsert(
    {
      first_name: `'First' || i`,
      last_name: `'Last, "' || i || '"'`,
      preferred_name: 'NULL',
      email: `'b' || i || '@school.test'`,
      date_of_birth: `'2010-01-01'`,
      status: `'active'`,
      grade_level: 'i % 13',
      ...dialect,
    },
    { file: __filename },
  );
}

/**
 * The rest of the students in one statement. This database is the benchmark's own and is thrown
 * away, and an export never searches: SQLite drops the search index's insert trigger first, as
 * collection-size.bench.js does for its seed, or a million trigram rows would take most of the run.
 * PostgreSQL likewise drops the trigram (GIN) indexes of the search, and loads with the list
 * tallies' trigger off (it runs once per row at commit) and the tallies counted afresh after it;
 * the b-tree an export reads by (organization, created_at, id) stays. That seeds a million rows in
 * about a minute instead of over fourteen.
 */
async function bulkStudents(db, organizationId, count) {
  if (DIALECT === 'sqlite') {
    const Database = require('better-sqlite3');
    const conn = new Database(db.file);
    conn.exec('DROP TRIGGER IF EXISTS students_search_insert');
    const created = `strftime('%Y-%m-%d %H:%M:%f', '2026-01-01', '+' || (i / 1000) || ' seconds')`;
    const { columns, select } = bulkColumns({
      id: `printf('stu_%026d', i)`,
      organization_id: ':org',
      student_number: `printf('B%08d', i)`,
      created_at: created,
      updated_at: created,
    });
    conn
      .prepare(
        `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < :count)
         INSERT INTO students (${columns}) SELECT ${select} FROM n`,
      )
      .run({ count, org: organizationId });
    conn.close();
    return;
  }
  const { Client } = require('pg');
  const { LIST_TALLIES, tallyRecount, talliedFields } = require('@platform/server/testing');
  const client = new Client({ connectionString: db.url });
  await client.connect();
  const { rows: search } = await client.query(
    `SELECT indexname FROM pg_indexes WHERE tablename = 'students' AND indexdef LIKE '%gin_trgm_ops%'`,
  );
  await client.query('BEGIN');
  for (const { indexname } of search) await client.query(`DROP INDEX "${indexname}"`);
  await client.query('ALTER TABLE students DISABLE TRIGGER USER');
  const created = `timestamptz '2026-01-01 00:00:00Z' + (i / 1000) * interval '1 second'`;
  const { columns, select } = bulkColumns({
    id: `'stu_' || lpad(i::text, 26, '0')`,
    organization_id: '$1',
    student_number: `'B' || lpad(i::text, 8, '0')`,
    created_at: created,
    updated_at: created,
  });
  await client.query(
    `INSERT INTO students (${columns}) SELECT ${select} FROM generate_series(1, $2::int) AS i`,
    [organizationId, count],
  );
  await client.query('ALTER TABLE students ENABLE TRIGGER USER');
  await client.query(`DELETE FROM ${LIST_TALLIES} WHERE collection = 'students'`);
  await client.query(tallyRecount({ table: 'students', fields: talliedFields('students') }));
  await client.query('COMMIT');
  // What autovacuum would do after such a load: statistics and the visibility map.
  await client.query('VACUUM (ANALYZE) students');
  await client.end();
}

async function baseline(db, organizationId, file) {
  const started = performance.now();
  const out = lineWriter(file);
  const columns = FIELDS.map(([, c]) => c).join(', ');
  const text = `SELECT ${columns} FROM students WHERE organization_id = '${organizationId.replace(/'/g, "''")}' ORDER BY created_at ASC, id ASC`;
  if (DIALECT === 'sqlite') {
    const Database = require('better-sqlite3');
    const conn = new Database(db.file, { readonly: true });
    for (const row of conn.prepare(text).iterate()) out.add(row);
    conn.close();
  } else {
    const { Client } = require('pg');
    const client = new Client({ connectionString: db.url });
    await client.connect();
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    await client.query(`DECLARE c NO SCROLL CURSOR FOR ${text}`);
    for (;;) {
      const { rows } = await client.query('FETCH 2000 FROM c');
      if (rows.length === 0) break;
      for (const row of rows) out.add(row);
    }
    await client.query('ROLLBACK');
    await client.end();
  }
  const rows = out.end();
  return { rows, seconds: (performance.now() - started) / 1000 };
}

/** Prints and writes the results, with whether each goal is met. */
function report({ bare, exportSeconds, seconds, rssBefore, rssPeak, rssExportPeak, same }) {
  const results = {
    database: DIALECT,
    rows: bare.rows,
    // The export's own duration, from its created_at to its completed_at.
    server: { seconds: exportSeconds, rowsPerSecond: Math.round(bare.rows / exportSeconds) },
    serverPolled: { seconds },
    baseline: { seconds: bare.seconds, rowsPerSecond: Math.round(bare.rows / bare.seconds) },
    ratio: Number((bare.seconds / exportSeconds).toFixed(3)),
    rssBeforeMb: Math.round(rssBefore),
    rssGrowthMb: Math.round(rssPeak - rssBefore),
    rssGrowthDuringExportMb: Math.round(rssExportPeak - rssBefore),
    sameBytesAsBaseline: same,
  };
  const goals = {
    rowsPerSecond: results.server.rowsPerSecond >= GOALS.rowsPerSecond,
    ratio: results.ratio >= GOALS.ratio,
    rss: results.rssGrowthMb < GOALS.rssGrowthMb,
  };
  log(JSON.stringify({ ...results, goals }, null, 2));
  writeResults(path.join(__dirname, 'results', `export-${DIALECT}.json`), 'export', {
    ...results,
    goals,
  });
}

async function main() {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-export-'));
  const db = await database(tmp, DIALECT, 'bench_export');
  let server;
  try {
    log(`seeding ${ROWS} students (${DIALECT})…`);
    const seedStarted = performance.now();
    const seeded = runCli(db.env, ['seed', '--students', '1', '--rate-limit', '1000000']);
    const { token, organization_id: organizationId } = seeded;
    await bulkStudents(db, organizationId, ROWS - 1);
    log(`seeded in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s`);
    const port = await freePort();
    server = startServer(db, port);
    const base = `http://127.0.0.1:${port}`;
    await waitReady(base);
    const headers = { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' };

    // The baseline first, then the server: both read the same rows from a warm cache.
    const bare = await baseline(db, organizationId, path.join(tmp, 'baseline.ndjson'));
    log(`baseline: ${bare.rows} rows in ${bare.seconds.toFixed(2)} s`);

    const rssBefore = rssMb(server.pid);
    let rssPeak = rssBefore;
    const sampler = setInterval(() => {
      rssPeak = Math.max(rssPeak, rssMb(server.pid));
    }, 50);
    const started = performance.now();
    const created = await (
      await fetch(`${base}/v1/exports`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ collection: 'students' }),
      })
    ).json();
    let done;
    for (;;) {
      done = await (await fetch(`${base}/v1/exports/${created.id}`, { headers })).json();
      if (done.status !== 'queued' && done.status !== 'running') break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const seconds = (performance.now() - started) / 1000;
    const exportSeconds = (Date.parse(done.completed_at) - Date.parse(done.created_at)) / 1000;
    clearInterval(sampler);
    const rssExportPeak = rssPeak;
    if (done.status !== 'succeeded' || done.row_count !== bare.rows)
      throw new Error(`export ended ${done.status} with ${done.row_count} rows`);

    // The download streams with bounded memory too; its bytes must be the baseline's.
    const file = await fetch(`${base}/v1/exports/${created.id}/file`, { headers });
    const hash = crypto.createHash('sha256');
    for await (const chunk of file.body) {
      hash.update(chunk);
      rssPeak = Math.max(rssPeak, rssMb(server.pid));
    }
    const same =
      hash.digest('hex') ===
      crypto
        .createHash('sha256')
        .update(fs.readFileSync(path.join(tmp, 'baseline.ndjson')))
        .digest('hex');

    report({ bare, exportSeconds, seconds, rssBefore, rssPeak, rssExportPeak, same });
  } finally {
    server?.kill('SIGTERM');
    await new Promise((resolve) => (server ? server.once('exit', resolve) : resolve()));
    await db.drop();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
