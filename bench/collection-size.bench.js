'use strict';
/**
 * Collection size benchmark (issue 17 goals 3 and 4): what a list page, a filtered page and a `q`
 * search cost at 10,000 students and at 1,000,000 (plus a second organization of 10,000), on the
 * real server, SQLite and (with BENCH_POSTGRES_URL) PostgreSQL. See README.md.
 *
 *   pnpm --filter @platform/server build && pnpm exec node bench/collection-size.bench.js
 *   BENCH_POSTGRES_URL=postgres://platform:platform@127.0.0.1:55432/postgres pnpm exec node bench/collection-size.bench.js
 *
 * Knobs: BENCH_LARGE (default 1000000), BENCH_SMALL (default 10000), BENCH_REQUESTS (sequential
 * requests per case, default 100, after BENCH_WARMUP, default 20), BENCH_ROUNDS (rounds per case
 * alternating the 10k and 1M servers, default 10), BENCH_DATABASES (sqlite,postgres).
 */
// Loopback only: this run and every process it starts refuse any other address (tooling/hermetic).
require('@platform/hermetic').enforceForRun();
const { spawn } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const Database = require('better-sqlite3');
const pg = require('pg');
const { LIST_TALLIES, tallyRecount, talliedFields } = require('@platform/server/testing');
const {
  REPO_ROOT,
  SERVER_MAIN,
  CLI_MAIN,
  cli,
  freePort,
  waitReady,
  requests,
  sequential,
  summarize,
  writeResults,
  configFromEnv,
  envNumber,
  serverNodeFlags,
} = require('./lib/harness');

const RESULTS_FILE = path.join(__dirname, 'results', 'collection-size.json');

const config = configFromEnv(() => ({
  large: envNumber('BENCH_LARGE', 1_000_000),
  small: envNumber('BENCH_SMALL', 10_000),
  requests: envNumber('BENCH_REQUESTS', 100),
  warmup: envNumber('BENCH_WARMUP', 20),
  // The worst-case search reads every row: fewer requests keep the run short.
  worstRequests: envNumber('BENCH_WORST_REQUESTS', 10),
  // Each case's requests are split into this many rounds, alternating the 10k and 1M servers.
  rounds: envNumber('BENCH_ROUNDS', 10),
}));
const POSTGRES_URL = process.env.BENCH_POSTGRES_URL || '';
const DATABASES = (process.env.BENCH_DATABASES || 'sqlite,postgres')
  .split(',')
  .filter((d) => d === 'sqlite' || (d === 'postgres' && POSTGRES_URL));
const RATE_LIMIT = 1_000_000;
const RATIO_GOAL = 1.5;
const SEARCH_GOAL_MS = 50;

// 50 surnames (so one matches ~1/50 of the rows) and 40 first names, none a substring of another.
const LAST_NAMES = (
  'Nakamura Okafor Lindqvist Castillo Rossi Petrov Haddad Kowalski Moreau Tanaka Oyelaran ' +
  'Fitzgerald Varga Almeida Sorensen Chaudhry Brennan Ivanova Mbeki Quintero Yilmaz Novak ' +
  'Delacroix Hakimi Ferreira Gallagher Jovanovic Kaminski Larsen Mwangi Nguyen Obrien Pham ' +
  'Ramirez Sato Thorsen Umarov Vasquez Wojcik Xiong Zhukov Abernathy Bianchi Cardoso ' +
  'Dimitriou Eriksen Fontaine Grimaldi Horvath Ishikawa'
).split(' ');
const FIRST_NAMES = (
  'Olivia Liam Amara Mateo Sofia Kenji Zara Elijah Ingrid Tomas Leila Arjun Chloe Diego Hana ' +
  'Felix Nadia Oscar Priya Rafael Selin Teodor Ursula Viktor Wanda Yusuf Anouk Bruno Clara ' +
  'Dmitri Esme Farid Greta Hugo Isla Jonas Kaia Lorenzo Maeve Nikolai'
).split(' ');
const STATUSES = ['active', 'inactive', 'graduated', 'withdrawn'];
const YEAR_SECONDS = 365 * 24 * 3600;
const EPOCH_MS = Date.UTC(2025, 0, 1);

/**
 * Each case, as the big organization's token asks it; `expect` is the page size it should get,
 * `total` (of the dataset's size) the exact `meta.total` the tallies must give.
 */
const all = (size) => size;
// Row n is active when n % 4 === 0 (STATUSES cycles).
const active = (size) => Math.floor(size / 4);
const CASES = [
  { name: 'page 1', query: 'per_page=5', expect: 5, total: all },
  { name: 'page 2000', query: 'per_page=5&page=2000', expect: 5, total: all },
  { name: 'page 1 status=active', query: 'per_page=5&status=active', expect: 5, total: active },
  // A quarter of the students are active: at 10,000 that is 2,500, so page 2,000 is past the end.
  {
    name: 'page 2000 status=active',
    query: 'per_page=5&page=2000&status=active',
    expect: { small: 0, large: 5 },
    total: active,
  },
  { name: 'q surname', query: 'per_page=5&q=nakamura', expect: 5, search: true },
  { name: 'q student number', query: 'per_page=5&q=S0004321', expect: 1, search: true },
  { name: 'q demo-school (all)', query: 'per_page=5&q=demo-school', expect: 5, worst: true },
];

const STUDENTS_TALLY = { table: 'students', fields: talliedFields('students') };

const log = (message = '') => process.stdout.write(`${message}\n`);

/** Row `n` (1-based) of an organization: names cycle, created_at spreads over a year. */
function studentRow(orgTag, orgId, n) {
  const first = FIRST_NAMES[n % FIRST_NAMES.length];
  const last = LAST_NAMES[n % LAST_NAMES.length];
  const created = EPOCH_MS + ((n * 7919) % YEAR_SECONDS) * 1000 + (n % 1000);
  // TypeORM's SQLite text form of a UTC timestamp: 'YYYY-MM-DD HH:MM:SS.sss'.
  const stamp = new Date(created).toISOString().replace('T', ' ').slice(0, 23);
  return [
    `stu_B${orgTag}${String(n).padStart(24, '0')}`,
    orgId,
    `S${String(n).padStart(7, '0')}`,
    first,
    last,
    null,
    `${first}.${last}${n}@demo-school.example`.toLowerCase(),
    '2012-05-17',
    STATUSES[n % STATUSES.length],
    n % 13,
    stamp,
    stamp,
  ];
}

/**
 * Per-step seed timings: `step('insert')` records the seconds since the previous step, and the
 * CPU seconds this process spent in it (`cpu`: SQLite's work runs here; PostgreSQL's in its server).
 */
function stepTimer() {
  const steps = {};
  const cpu = {};
  let last = process.hrtime.bigint();
  let lastCpu = process.cpuUsage();
  const step = (name) => {
    const now = process.hrtime.bigint();
    const used = process.cpuUsage(lastCpu);
    steps[name] = (steps[name] ?? 0) + Number(now - last) / 1e9;
    cpu[name] = (cpu[name] ?? 0) + (used.user + used.system) / 1e6;
    last = now;
    lastCpu = process.cpuUsage();
  };
  step.steps = steps;
  step.cpu = cpu;
  return step;
}

const COLUMNS =
  'id, organization_id, student_number, first_name, last_name, preferred_name, email, ' +
  'date_of_birth, status, grade_level, created_at, updated_at';

/**
 * The indexes and triggers of `students` as SQLite stores them (the unique constraints' automatic
 * indexes have no SQL and are left alone), and a fingerprint of the whole schema.
 */
function sqliteSchema(db) {
  const objects = db
    .prepare(
      `SELECT type, name, tbl_name, sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY type, name`,
    )
    .all();
  const droppable = objects.filter(
    (o) => o.tbl_name === 'students' && (o.type === 'index' || o.type === 'trigger'),
  );
  return { droppable, fingerprint: JSON.stringify(objects) };
}

/** `names` padded to one width, for picking name `i` in SQL: rtrim(substr(list, i * w + 1, w)). */
function paddedList(names) {
  const width = Math.max(...names.map((n) => n.length)) + 1;
  return { list: names.map((n) => n.padEnd(width)).join(''), width };
}

/**
 * Rows from..to (inclusive) of each range's organization, each range one `INSERT … SELECT` over a
 * recursive counter that builds studentRow()'s values in SQL (checked against it on a sample), in
 * one transaction. Fast: the students' indexes and their FTS5 triggers are dropped for the
 * insert, then the search index is filled in one statement (as migration SearchIndex1766000000000
 * does for existing rows: keys in rowid order, what the insert trigger would have given them) and
 * the indexes and triggers are recreated from their own stored SQL. The schema must end exactly
 * as the migrations made it: checked, and so is the search index.
 *
 * Only this connection, for the seed (restored before it closes): no journal (the file is
 * throwaway: a failed seed fails the run), a 1 GiB page cache (the million rows and their
 * indexes stay in memory until the commit), sorter threads for the index
 * builds, and a large FTS5 pending-terms buffer (`hashsize`, default 1 MB: flushed and merged
 * ~50 times per million rows otherwise), whose config row is deleted after so the table's config
 * is what the migration left.
 */
function seedSqlite(file, ranges) {
  const step = stepTimer();
  const db = new Database(file);
  db.pragma('cache_size = -1048576');
  db.pragma('synchronous = OFF');
  db.pragma('threads = 2');
  const journal = db.pragma('journal_mode', { simple: true });
  // Leaving WAL must go through DELETE; OFF then writes pages straight to the file.
  db.pragma('journal_mode = DELETE');
  db.pragma('journal_mode = OFF');
  const before = sqliteSchema(db);
  const config = () => JSON.stringify(db.prepare('SELECT * FROM students_search_config').all());
  const configBefore = config();
  const search = 'first_name, last_name, email, student_number';
  const firsts = paddedList(FIRST_NAMES);
  const lasts = paddedList(LAST_NAMES);
  const statuses = paddedList(STATUSES);
  const first = `rtrim(substr(:firsts, (n % ${FIRST_NAMES.length}) * ${firsts.width} + 1, ${firsts.width}))`;
  const last = `rtrim(substr(:lasts, (n % ${LAST_NAMES.length}) * ${lasts.width} + 1, ${lasts.width}))`;
  const status = `rtrim(substr(:statuses, (n % ${STATUSES.length}) * ${statuses.width} + 1, ${statuses.width}))`;
  // studentRow()'s created_at: whole seconds into the year plus n % 1000 ms, as TypeORM's text.
  const stamp = `strftime('%Y-%m-%d %H:%M:%f', (${EPOCH_MS} + ((n * 7919) % ${YEAR_SECONDS}) * 1000 + n % 1000) / 1000.0, 'unixepoch')`;
  const insert = db.prepare(
    `WITH RECURSIVE r(n) AS (SELECT CAST(:from AS INTEGER) UNION ALL SELECT n + 1 FROM r WHERE n < :to)
     INSERT INTO students (${COLUMNS})
     SELECT printf('stu_B%s%024d', :tag, n), :org, printf('S%07d', n), f, l, NULL,
            lower(f || '.' || l || n || '@demo-school.example'), '2012-05-17', ${status},
            n % 13, c, c
     FROM (SELECT n, ${first} AS f, ${last} AS l, ${stamp} AS c FROM r)`,
  );
  db.transaction(() => {
    for (const o of before.droppable) db.exec(`DROP ${o.type.toUpperCase()} "${o.name}"`);
    step('drop');
    const lastRowid = db.prepare('SELECT COALESCE(MAX(rowid), 0) AS m FROM students').get().m;
    const lastKey = db
      .prepare('SELECT COALESCE(MAX(key), 0) AS m FROM students_search_keys')
      .get().m;
    for (const { orgTag, orgId, from, to } of ranges)
      insert.run({
        from,
        to,
        tag: orgTag,
        org: orgId,
        firsts: firsts.list,
        lasts: lasts.list,
        statuses: statuses.list,
      });
    step('insert');
    db.prepare(
      `INSERT INTO students_search_keys (id) SELECT id FROM students WHERE rowid > ? ORDER BY rowid`,
    ).run(lastRowid);
    step('search keys');
    // A literal: FTS5 refuses a bound value for a config option.
    db.exec(`INSERT INTO students_search (students_search, rank) VALUES ('hashsize', 268435456)`);
    db.prepare(
      `INSERT INTO students_search (rowid, ${search})
       SELECT k.key, t.first_name, t.last_name, t.email, t.student_number
       FROM students_search_keys k JOIN students t ON t.id = k.id WHERE k.key > ? ORDER BY k.key`,
    ).run(lastKey);
    // A shadow table: writable only outside SQLite's defensive mode, for this one statement.
    db.unsafeMode(true);
    db.prepare(`DELETE FROM students_search_config WHERE k = 'hashsize'`).run();
    db.unsafeMode(false);
    step('FTS fill');
    // Indexes before triggers.
    for (const o of before.droppable.filter((x) => x.type === 'index')) db.exec(o.sql);
    step('index rebuild');
    // The list totals' tally triggers were dropped with the others: count the tallies afresh, as
    // their migration does (checked by every list case's exact meta.total).
    db.prepare(`DELETE FROM ${LIST_TALLIES} WHERE collection = 'students'`).run();
    db.prepare(tallyRecount(STUDENTS_TALLY)).run();
    step('tallies');
    for (const o of before.droppable.filter((x) => x.type === 'trigger')) db.exec(o.sql);
  })();
  step('commit');
  if (sqliteSchema(db).fingerprint !== before.fingerprint || config() !== configBefore)
    throw new Error('seed: the SQLite schema differs from what the migrations made');
  verifySqliteRows(db, ranges);
  verifySqliteSearch(db, ranges);
  step('checks');
  db.exec('ANALYZE');
  step('ANALYZE');
  db.pragma(`journal_mode = ${journal}`);
  if (db.pragma('journal_mode', { simple: true }) !== journal)
    throw new Error(`seed: could not restore journal_mode ${journal}`);
  db.close();
  step('close');
  return { steps: step.steps, cpu: step.cpu };
}

/** The SQL-built rows are studentRow()'s: compared on each range's ends and a sample between. */
function verifySqliteRows(db, ranges) {
  const get = db.prepare(`SELECT ${COLUMNS} FROM students WHERE id = ?`).raw();
  for (const { orgTag, orgId, from, to } of ranges) {
    const sample = new Set([from, to]);
    for (let k = 0; k < 200; k++) sample.add(from + Math.floor(Math.random() * (to - from + 1)));
    for (const n of sample) {
      const expected = studentRow(orgTag, orgId, n);
      const actual = get.get(expected[0]);
      if (JSON.stringify(actual) !== JSON.stringify(expected))
        throw new Error(
          `seed: row ${n} is ${JSON.stringify(actual)}, not ${JSON.stringify(expected)}`,
        );
    }
  }
}

/**
 * Every student has a search key, and the FTS5 index finds what a scan finds. The FTS5
 * integrity-check and the join of every student to its key (~8 s at a million rows) run when the
 * table holds at most SEED_FULL_CHECK_ROWS; above it, the counts and the index-vs-scan comparison.
 */
const SEED_FULL_CHECK_ROWS = 100_000;
function verifySqliteSearch(db) {
  const one = (text) => Object.values(db.prepare(text).get())[0];
  const students = one('SELECT COUNT(*) FROM students');
  const full = students <= SEED_FULL_CHECK_ROWS;
  const keys = one('SELECT COUNT(*) FROM students_search_keys');
  const keyed = full
    ? one('SELECT COUNT(*) FROM students s JOIN students_search_keys k ON k.id = s.id')
    : keys;
  if (keyed !== students || keys !== students)
    throw new Error(`seed: ${keyed} of ${students} students have a search key (${keys} keys)`);
  if (full) db.exec(`INSERT INTO students_search (students_search) VALUES ('integrity-check')`);
  for (const [needle, column] of [
    ['kowalski', 'last_name'],
    ['s0004321', 'student_number'],
  ]) {
    const indexed = one(
      `SELECT COUNT(*) FROM students_search WHERE students_search MATCH '"${needle}"'`,
    );
    const scanned = one(`SELECT COUNT(*) FROM students WHERE lower(${column}) LIKE '%${needle}%'`);
    if (indexed !== scanned)
      throw new Error(`seed: the search index finds ${indexed} '${needle}', a scan ${scanned}`);
  }
}

/** The indexes of `students` as pg_indexes defines them, and which are constraints' own. */
async function postgresIndexes(client) {
  const { rows } = await client.query(
    `SELECT i.indexname, i.indexdef, c.contype
     FROM pg_indexes i LEFT JOIN pg_constraint c ON c.conname = i.indexname
     WHERE i.schemaname = current_schema() AND i.tablename = 'students' ORDER BY i.indexname`,
  );
  return rows;
}

/** The constraints of `students` as PostgreSQL defines them (name, definition). */
async function postgresConstraints(client) {
  const { rows } = await client.query(
    `SELECT conname, contype, pg_get_constraintdef(oid) AS def FROM pg_constraint
     WHERE conrelid = 'students'::regclass ORDER BY conname`,
  );
  return rows;
}

/** Connections that build the indexes side by side (each one index at a time). */
const SEED_PG_CONNECTIONS = 2;

/**
 * Rows from..to in one INSERT … SELECT per range. Fast: the indexes that are not constraints'
 * (the four GIN trigram indexes and the b-trees, most of ~220 s per million when maintained row
 * by row) are dropped first and, after the insert commits, recreated from pg_indexes' own
 * definitions on SEED_PG_CONNECTIONS connections at once, largest first; the foreign keys of
 * `students` are dropped for the insert (their row-by-row check was half its time) and added
 * back from pg_get_constraintdef in the same transaction, which validates every row in one join.
 * The run then checks that indexes and constraints are exactly what the migrations made.
 */
async function seedPostgres(url, ranges) {
  const step = stepTimer();
  const connect = async () => {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    // This session only: room for the index builds' sorts and GIN's pending entries.
    await c.query(`SET maintenance_work_mem = '512MB'`);
    return c;
  };
  const clients = [await connect()];
  const [client] = clients;
  try {
    const before = await postgresIndexes(client);
    const constraints = await postgresConstraints(client);
    const droppable = before.filter((i) => !i.contype);
    const foreignKeys = constraints.filter((c) => c.contype === 'f');
    await client.query('BEGIN');
    for (const i of droppable) await client.query(`DROP INDEX "${i.indexname}"`);
    for (const c of foreignKeys)
      await client.query(`ALTER TABLE students DROP CONSTRAINT "${c.conname}"`);
    // The list totals' trigger runs once per row at commit: off for the load (this transaction
    // only), the tallies counted afresh after it, as their migration does.
    await client.query('ALTER TABLE students DISABLE TRIGGER USER');
    step('drop');
    const arr = (xs) => `ARRAY[${xs.map((x) => `'${x}'`).join(',')}]`;
    const first = `(${arr(FIRST_NAMES)})[1 + n % ${FIRST_NAMES.length}]`;
    const last = `(${arr(LAST_NAMES)})[1 + n % ${LAST_NAMES.length}]`;
    const created = `(timestamptz '2025-01-01 00:00:00+00' + ((n::bigint * 7919) % ${YEAR_SECONDS}) * interval '1 second' + (n % 1000) * interval '1 millisecond')`;
    for (const { orgTag, orgId, from, to } of ranges)
      await client.query(
        `INSERT INTO students (${COLUMNS})
         SELECT 'stu_B' || $1::text || lpad(n::text, 24, '0'), $2::text, 'S' || lpad(n::text, 7, '0'),
                ${first}, ${last}, NULL, lower(${first} || '.' || ${last} || n || '@demo-school.example'),
                '2012-05-17', (${arr(STATUSES)})[1 + n % 4], n % 13, ${created}, ${created}
         FROM generate_series($3::int, $4::int) AS n`,
        [orgTag, orgId, from, to],
      );
    step('insert');
    for (const c of foreignKeys)
      await client.query(`ALTER TABLE students ADD CONSTRAINT "${c.conname}" ${c.def}`);
    step('foreign keys');
    await client.query('ALTER TABLE students ENABLE TRIGGER USER');
    await client.query(`DELETE FROM ${LIST_TALLIES} WHERE collection = 'students'`);
    await client.query(tallyRecount(STUDENTS_TALLY));
    step('tallies');
    await client.query('COMMIT');
    step('commit');
    // Largest first (GIN over the longest text), so the connections finish close together.
    const weight = (def) => (def.includes('gin_trgm_ops') ? (def.includes('email') ? 4 : 2) : 1);
    const queue = [...droppable].sort((a, b) => weight(b.indexdef) - weight(a.indexdef));
    while (clients.length < Math.min(SEED_PG_CONNECTIONS, queue.length))
      clients.push(await connect());
    await Promise.all(
      clients.map(async (c) => {
        for (let i = queue.shift(); i; i = queue.shift()) await c.query(i.indexdef);
      }),
    );
    step('indexes');
    if (
      JSON.stringify(await postgresIndexes(client)) !== JSON.stringify(before) ||
      JSON.stringify(await postgresConstraints(client)) !== JSON.stringify(constraints)
    )
      throw new Error('seed: the PostgreSQL indexes differ from what the migrations made');
    step('checks');
    // What autovacuum does shortly after such a load in production (its insert threshold is
    // 1,000 rows plus a fifth of the table): statistics, and the visibility map that lets a
    // count read only an index (an index-only scan of a never-vacuumed table reads every row).
    await client.query('VACUUM (ANALYZE) students');
    step('VACUUM (ANALYZE)');
    return { steps: step.steps };
  } finally {
    await Promise.all(clients.map((c) => c.end()));
  }
}

async function adminQuery(text) {
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

let tmpDir;
let servers = [];
let pgDatabases = [];
function stopServers() {
  for (const server of servers) if (server.exitCode === null) server.kill('SIGKILL');
  servers = [];
}
async function cleanup() {
  stopServers();
  if (tmpDir) fs.rmSync(tmpDir, { recursive: true, force: true });
  tmpDir = undefined;
  const names = pgDatabases;
  pgDatabases = [];
  for (const name of names)
    await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch((e) =>
      log(`could not drop ${name}: ${e.message}`),
    );
}
for (const signal of ['SIGINT', 'SIGTERM'])
  process.on(signal, () => cleanup().finally(() => process.exit(130)));

async function startServer(databaseUrl) {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const server = spawn(process.execPath, [...serverNodeFlags(), SERVER_MAIN], {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      // PostgreSQL requires the key that seals webhook secrets; none are stored in this run.
      WEBHOOK_SECRETS_KEY: crypto.randomBytes(32).toString('base64'),
      HOST: '127.0.0.1',
      PORT: String(port),
      NODE_ENV: 'production',
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  servers.push(server);
  await waitReady(base);
  return base;
}

/**
 * Each case on both servers (`bases.small`: 10,000 students; `bases.large`: 1,000,000), its
 * requests split into `config.rounds` rounds that alternate between the two (and which goes
 * first), so a change in the machine's load between them hits both datasets alike: the ratio
 * compares the datasets, not two moments of a shared machine.
 */
async function measurePair(bases, token) {
  const results = { small: [], large: [] };
  const datasets = ['small', 'large'];
  for (const c of CASES) {
    const n = c.worst ? config.worstRequests : config.requests;
    const rounds = Math.min(config.rounds, n);
    const url = (d) => `${bases[d]}/v1/students?${c.query}`;
    for (const d of datasets)
      await sequential(url(d), token, c.worst ? Math.min(3, config.warmup) : config.warmup);
    const got = Object.fromEntries(
      datasets.map((d) => [d, { latencies: [], statuses: {}, firstBody: undefined }]),
    );
    for (let r = 0; r < rounds; r++) {
      const share = Math.floor(n / rounds) + (r < n % rounds ? 1 : 0);
      for (const d of r % 2 ? [...datasets].reverse() : datasets) {
        const part = await requests(url(d), token, share);
        got[d].latencies.push(...part.latencies);
        for (const [status, k] of Object.entries(part.statuses))
          got[d].statuses[status] = (got[d].statuses[status] ?? 0) + k;
        got[d].firstBody ??= part.firstBody;
      }
    }
    for (const d of datasets) {
      const label = d === 'small' ? '10k' : '1M';
      const r = { ...summarize(got[d].latencies), statuses: got[d].statuses };
      const body = JSON.parse(got[d].firstBody);
      const expected = typeof c.expect === 'number' ? c.expect : c.expect[d];
      const total = c.total?.(config[d]);
      const ok =
        r.statuses[200] === n &&
        body.data?.length === expected &&
        (total === undefined || (body.meta.total === total && body.meta.total_exact === true));
      // A search past its budget answers 503 (search_timeout): a result to report, not a failure.
      const timedOut =
        (c.search || c.worst) && Object.keys(r.statuses).every((s) => s === '200' || s === '503');
      if (!ok && !timedOut)
        throw new Error(
          `${label} ${c.name}: statuses ${JSON.stringify(r.statuses)}, ${body.data?.length} rows (expected ${expected}), ` +
            `meta.total ${body.meta?.total} exact ${body.meta?.total_exact} (expected ${total ?? 'any'})`,
        );
      const row = {
        case: c.name,
        query: c.query,
        n: r.n,
        p50_ms: r.p50_ms,
        p99_ms: r.p99_ms,
        statuses: r.statuses,
        rows: body.data?.length ?? null,
        total: body.meta?.total ?? null,
        total_exact: body.meta?.total_exact ?? null,
        code: body.code ?? null,
      };
      results[d].push(row);
      log(
        `  ${label.padEnd(6)} ${c.name.padEnd(24)} p50 ${r.p50_ms.toFixed(1).padStart(7)} ms  p99 ${r.p99_ms
          .toFixed(1)
          .padStart(7)} ms  total ${String(row.total ?? '-').padStart(7)} exact ${String(
          row.total_exact ?? '-',
        ).padEnd(5)} ${JSON.stringify(r.statuses)}${row.code ? ` ${row.code}` : ''}`,
      );
    }
  }
  return results;
}

/**
 * Both datasets from one database: 10,000 in the big organization, copied (the SQLite file; on
 * PostgreSQL a database made from it as a template), then grown to 1,000,000; a server on each,
 * measured side by side (measurePair).
 */
async function runDatabase(kind) {
  let url;
  let seed;
  let copy;
  if (kind === 'sqlite') {
    tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'platform-size-bench-'));
    const file = path.join(tmpDir, 'bench.sqlite');
    url = `sqlite:${file}`;
    seed = (...args) => seedSqlite(file, ...args);
    copy = async () => {
      const small = path.join(tmpDir, 'bench-10k.sqlite');
      // The seed's connection closed last, so WAL was checkpointed into the file: it is whole.
      fs.copyFileSync(file, small);
      return `sqlite:${small}`;
    };
  } else {
    const name = `bench_size_${process.pid}`;
    pgDatabases.push(name);
    await adminQuery(`CREATE DATABASE ${name}`);
    const u = new URL(POSTGRES_URL);
    u.pathname = `/${name}`;
    url = u.toString();
    seed = (...args) => seedPostgres(url, ...args);
    copy = async () => {
      const small = `${name}_10k`;
      pgDatabases.push(small);
      // Nobody is connected to the seeded database now, as a template requires.
      await adminQuery(`CREATE DATABASE ${small} TEMPLATE ${name}`);
      const v = new URL(POSTGRES_URL);
      v.pathname = `/${small}`;
      return v.toString();
    };
  }
  cli(url, ['migrate']);
  const org = (name) =>
    cli(url, [
      'orgs:create',
      '--name',
      name,
      '--plan',
      'enterprise',
      '--rate-limit',
      String(RATE_LIMIT),
    ]);
  const big = org('Big District');
  const token = cli(url, [
    'tokens:create',
    '--org',
    big.id,
    '--name',
    'bench',
    '--scopes',
    'students:read',
  ]).token;

  const out = { database: kind, datasets: {} };
  const steps = (timed) =>
    Object.entries(timed.steps)
      .map(([name, s]) => {
        const cpu = timed.cpu?.[name];
        return `${name} ${s.toFixed(2)}${cpu === undefined ? '' : ` (cpu ${cpu.toFixed(2)})`}`;
      })
      .join(', ');
  let started = Date.now();
  out.seed_small_steps = await seed([{ orgTag: '1', orgId: big.id, from: 1, to: config.small }]);
  out.seed_small_seconds = (Date.now() - started) / 1000;
  log(`${kind}: seeded ${config.small} students in ${out.seed_small_seconds.toFixed(1)} s`);
  log(`  seed steps (s): ${steps(out.seed_small_steps)}`);
  const smallUrl = await copy();

  started = Date.now();
  const second = org('Second School');
  out.seed_large_steps = await seed([
    { orgTag: '1', orgId: big.id, from: config.small + 1, to: config.large },
    { orgTag: '2', orgId: second.id, from: 1, to: config.small },
  ]);
  out.seed_large_seconds = (Date.now() - started) / 1000;
  log(
    `${kind}: grew to ${config.large} students (+ ${config.small} in a second organization) in ${out.seed_large_seconds.toFixed(1)} s`,
  );
  log(`  seed steps (s): ${steps(out.seed_large_steps)}`);
  const bases = { small: await startServer(smallUrl), large: await startServer(url) };
  Object.assign(out.datasets, await measurePair(bases, token));
  stopServers();
  await cleanup();

  out.ratios = out.datasets.small.map((s, i) => {
    const l = out.datasets.large[i];
    const { search, worst } = CASES[i];
    // What the case is held to (bench/lib/goals.js reads it): a list's ratio, a search's ratio
    // and its p50 at the larger size, or nothing (the worst case is reported only).
    const kind = worst ? 'worst' : search ? 'search' : 'list';
    return { case: s.case, kind, ratio_p50: l.p50_ms / s.p50_ms, ratio_p99: l.p99_ms / s.p99_ms };
  });
  return out;
}

function report(out) {
  log();
  log(
    `${out.database}: 1M / 10k (goal: p50 ratio <= ${RATIO_GOAL}; q p50 at 1M < ${SEARCH_GOAL_MS} ms)`,
  );
  log(
    `  ${'case'.padEnd(24)} ${'10k p50'.padStart(8)} ${'1M p50'.padStart(8)} ${'10k p99'.padStart(8)} ${'1M p99'.padStart(8)}  ratio p50  goal`,
  );
  out.ratios.forEach((r, i) => {
    const s = out.datasets.small[i];
    const l = out.datasets.large[i];
    const c = CASES[i];
    let goal;
    if (c.worst) goal = 'reported only';
    else if (c.search)
      goal = `${r.ratio_p50 <= RATIO_GOAL ? 'ok' : 'MISS'} ratio, ${l.p50_ms < SEARCH_GOAL_MS ? 'ok' : 'MISS'} <50ms`;
    else goal = r.ratio_p50 <= RATIO_GOAL ? 'ok' : 'MISS';
    log(
      `  ${r.case.padEnd(24)} ${s.p50_ms.toFixed(1).padStart(8)} ${l.p50_ms.toFixed(1).padStart(8)} ${s.p99_ms
        .toFixed(1)
        .padStart(
          8,
        )} ${l.p99_ms.toFixed(1).padStart(8)}  ${r.ratio_p50.toFixed(2).padStart(9)}  ${goal}`,
    );
  });
}

async function main() {
  for (const file of [SERVER_MAIN, CLI_MAIN])
    if (!fs.existsSync(file))
      throw new Error(`${file} is missing: pnpm --filter @platform/server build`);
  if (!POSTGRES_URL) log('BENCH_POSTGRES_URL is not set: SQLite only.');
  const runs = [];
  for (const kind of DATABASES) {
    const out = await runDatabase(kind);
    report(out);
    runs.push(out);
  }
  const written = writeResults(RESULTS_FILE, 'collection-size', {
    config,
    goals: { ratio_p50_max: RATIO_GOAL, search_p50_ms_max: SEARCH_GOAL_MS },
    runs,
  });
  log();
  log(`Results written to ${written}`);
}

if (require.main === module)
  main()
    .then(async () => {
      await cleanup();
      process.exit(0);
    })
    .catch(async (error) => {
      log(`BENCHMARK FAILED: ${error.message}`);
      await cleanup();
      process.exit(1);
    });

// For profiling a seeded database by hand (EXPLAIN): the seeders, without running the bench.
module.exports = { seedSqlite, seedPostgres };
