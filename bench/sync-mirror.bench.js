'use strict';
/**
 * The mirror's loader (`platform-sync`, packages/platform-sync) against a bare loader, in the same
 * run: both load the same NDJSON export file of BENCH_ROWS students (default 100,000) into a
 * PostgreSQL table, in transactions of 5,000 rows of multi-row `INSERT … ON CONFLICT (id) DO UPDATE`
 * statements. The bare loader is a hand-written table, readline and node-postgres; the mirror's
 * is the table derived from the contract and `loadNdjson`. Each loads BENCH_RUNS times (default
 * 2), alternating, into an emptied table; the best run of each counts. Gate: the mirror loads at
 * least 0.5x the bare loader's rows/s, or the benchmark exits 1.
 *
 *   pnpm --filter @platform/sync build && BENCH_POSTGRES_URL=postgres://… node bench/sync-mirror.bench.js
 *   BENCH_ONLY=sync-mirror pnpm bench
 */
// Loopback only: this run and every process it starts refuse any other address (tooling/hermetic).
require('@platform/hermetic').enforceForRun();
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const readline = require('node:readline');
const pg = require('pg');
const { StudentSchema } = require('@platform/contract');
const { envNumber, writeResults } = require('./lib/harness');
const { judge, format } = require('./lib/gate');

const SYNC_DIST = path.join(__dirname, '..', 'packages', 'platform-sync', 'dist', 'index.js');
const ROWS = envNumber('BENCH_ROWS', 100_000, { integer: true });
const RUNS = envNumber('BENCH_RUNS', 2, { integer: true });
const TX_ROWS = 5000;
const FLOORS = {
  sync_mirror_load: { floor: 0.5, margin: 0, what: 'mirror loader / bare loader (rows/s)' },
};
const log = (line) => console.log(line);

/** One student as the API exports it: every field of the contract's schema. */
function student(i) {
  const at = new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString();
  return {
    id: `stu_${String(i).padStart(26, '0')}`,
    object: 'student',
    student_number: `S-${i}`,
    first_name: `First ${i}`,
    last_name: `Last ${i % 997}`,
    preferred_name: i % 5 === 0 ? `Pref ${i}` : null,
    email: `student${i}@school.example`,
    date_of_birth: '2012-05-17',
    status: 'active',
    grade_level: i % 13,
    created_at: at,
    updated_at: at,
  };
}

function writeExportFile(file) {
  const fields = Object.keys(StudentSchema.shape).sort().join();
  if (Object.keys(student(0)).sort().join() !== fields)
    throw new Error(`the benchmark's student lacks fields of StudentSchema: ${fields}`);
  const fd = fs.openSync(file, 'w');
  let chunk = '';
  for (let i = 0; i < ROWS; i += 1) {
    chunk += `${JSON.stringify(student(i))}\n`;
    if (chunk.length > 1 << 20) {
      fs.writeSync(fd, chunk);
      chunk = '';
    }
  }
  fs.writeSync(fd, chunk);
  fs.closeSync(fd);
}

/** The bare loader: a hand-written table, readline, JSON.parse, batched multi-row upserts. */
const BARE_COLUMNS = Object.keys(student(0));
const BARE_TYPES = { grade_level: 'BIGINT' };

async function bareLoad(url, file) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const columns = BARE_COLUMNS.map((c) =>
    c === 'id' ? 'id TEXT COLLATE "C" PRIMARY KEY' : `${c} ${BARE_TYPES[c] ?? 'TEXT'}`,
  );
  await client.query(`CREATE TABLE IF NOT EXISTS bare_students (${columns.join(', ')})`);
  await client.query('TRUNCATE bare_students');
  const updates = BARE_COLUMNS.filter((c) => c !== 'id').map((c) => `${c} = excluded.${c}`);
  const statement = (n) => {
    const tuples = [];
    for (let r = 0; r < n; r += 1)
      tuples.push(
        `(${BARE_COLUMNS.map((_, c) => `$${r * BARE_COLUMNS.length + c + 1}`).join(', ')})`,
      );
    return `INSERT INTO bare_students (${BARE_COLUMNS.join(', ')}) VALUES ${tuples.join(', ')} ON CONFLICT (id) DO UPDATE SET ${updates.join(', ')}`;
  };
  const full = statement(1000);
  const flush = async (rows) => {
    await client.query('BEGIN');
    for (let start = 0; start < rows.length; start += 1000) {
      const chunk = rows.slice(start, start + 1000);
      const params = chunk.flatMap((row) => BARE_COLUMNS.map((c) => row[c] ?? null));
      await client.query(chunk.length === 1000 ? full : statement(chunk.length), params);
    }
    await client.query('COMMIT');
  };
  const started = performance.now();
  let batch = [];
  let rows = 0;
  for await (const line of readline.createInterface({ input: fs.createReadStream(file) })) {
    if (line === '') continue;
    batch.push(JSON.parse(line));
    if (batch.length === TX_ROWS) {
      rows += batch.length;
      await flush(batch);
      batch = [];
    }
  }
  rows += batch.length;
  if (batch.length > 0) await flush(batch);
  const seconds = (performance.now() - started) / 1000;
  await client.end();
  return { rows, seconds };
}

/** The mirror's loader: the contract's students table and `loadNdjson`. */
async function mirrorLoad(sync, url, file) {
  const db = await sync.openDatabase(url);
  const spec = sync.collectionTable('students');
  await sync.ensureTables(db, [spec]);
  await db.run('TRUNCATE "students"');
  const started = performance.now();
  const result = await sync.loadNdjson(db, spec, fs.createReadStream(file), { batchRows: TX_ROWS });
  const seconds = (performance.now() - started) / 1000;
  await db.close();
  return { rows: result.loaded, seconds };
}

async function withDatabase(adminUrl, fn) {
  const name = `sync_bench_${crypto.randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  try {
    return await fn(url.toString());
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
}

async function measure(url, file) {
  const sync = require(SYNC_DIST);
  const runs = { bare: [], mirror: [] };
  for (let run = 1; run <= RUNS; run += 1) {
    for (const [name, load] of [
      ['bare', () => bareLoad(url, file)],
      ['mirror', () => mirrorLoad(sync, url, file)],
    ]) {
      const { rows, seconds } = await load();
      if (rows !== ROWS) throw new Error(`${name} loaded ${rows} rows, not ${ROWS}`);
      const perSecond = rows / seconds;
      runs[name].push(perSecond);
      log(
        `run ${run}: ${name.padEnd(6)} ${rows} rows in ${seconds.toFixed(2)} s, ${Math.round(perSecond)} rows/s`,
      );
    }
  }
  return { bare: Math.max(...runs.bare), mirror: Math.max(...runs.mirror), runs };
}

async function main() {
  const adminUrl = process.env.BENCH_POSTGRES_URL;
  if (!adminUrl)
    throw new Error('BENCH_POSTGRES_URL is required (BENCH_ONLY=sync-mirror pnpm bench sets it)');
  if (!fs.existsSync(SYNC_DIST))
    throw new Error('Build the mirror first: pnpm --filter @platform/sync build');
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sync-mirror-bench-'));
  try {
    const file = path.join(tmp, 'students.ndjson');
    writeExportFile(file);
    log(
      `sync-mirror: ${ROWS} students, ${(fs.statSync(file).size / 1048576).toFixed(1)} MiB of NDJSON, ${RUNS} runs each`,
    );
    const { bare, mirror, runs } = await withDatabase(adminUrl, (url) => measure(url, file));
    const ratio = mirror / bare;
    const rows = judge(FLOORS, { sync_mirror_load: ratio });
    log(format(rows));
    const written = writeResults(
      path.join(__dirname, 'results', 'sync-mirror.json'),
      'sync-mirror',
      {
        rows: ROWS,
        runs,
        rows_per_second: { bare: Math.round(bare), mirror: Math.round(mirror) },
        ratio,
        goals: { ratio: FLOORS.sync_mirror_load.floor, met: rows.every((r) => r.ok) },
      },
    );
    log(`wrote ${written}`);
    if (!rows.every((r) => r.ok)) process.exitCode = 1;
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
