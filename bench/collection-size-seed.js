'use strict';
/**
 * The collection size benchmark's datasets: students built in SQL (SQLite) or by COPY (PostgreSQL)
 * straight into a migrated database, each seed timed by step and checked against studentRow().
 */
const Database = require('better-sqlite3');
const pg = require('pg');
const { LIST_TALLIES, tallyRecount, talliedFields } = require('@platform/server/testing');
const { studentColumns, studentInsert, studentRecord } = require('./lib/student-columns');

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

const STUDENTS_TALLY = { table: 'students', fields: talliedFields('students') };

/**
 * Row `n` (1-based) of an organization, keyed by column: names cycle, created_at spreads over a
 * year. The columns are the contract's (lib/student-columns.js): a nullable one not given is null.
 */
function studentRow(orgTag, orgId, n) {
  const first = FIRST_NAMES[n % FIRST_NAMES.length];
  const last = LAST_NAMES[n % LAST_NAMES.length];
  const created = EPOCH_MS + ((n * 7919) % YEAR_SECONDS) * 1000 + (n % 1000);
  // TypeORM's SQLite text form of a UTC timestamp: 'YYYY-MM-DD HH:MM:SS.sss'.
  const stamp = new Date(created).toISOString().replace('T', ' ').slice(0, 23);
  return studentRecord(
    {
      id: `stu_B${orgTag}${String(n).padStart(24, '0')}`,
      organization_id: orgId,
      student_number: `S${String(n).padStart(7, '0')}`,
      first_name: first,
      last_name: last,
      preferred_name: null,
      email: `${first}.${last}${n}@demo-school.example`.toLowerCase(),
      date_of_birth: '2012-05-17',
      status: STATUSES[n % STATUSES.length],
      grade_level: n % 13,
      created_at: stamp,
      updated_at: stamp,
    },
    { file: __filename },
  );
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

/** The columns of `students`, from the contract's declaration (lib/student-columns.js). */
const COLUMNS = studentColumns().join(', ');

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

/** The `INSERT … SELECT` that builds studentRow()'s values in SQL, and the name lists it reads. */
function rowInsert(db) {
  const firsts = paddedList(FIRST_NAMES);
  const lasts = paddedList(LAST_NAMES);
  const statuses = paddedList(STATUSES);
  const first = `rtrim(substr(:firsts, (n % ${FIRST_NAMES.length}) * ${firsts.width} + 1, ${firsts.width}))`;
  const last = `rtrim(substr(:lasts, (n % ${LAST_NAMES.length}) * ${lasts.width} + 1, ${lasts.width}))`;
  const status = `rtrim(substr(:statuses, (n % ${STATUSES.length}) * ${statuses.width} + 1, ${statuses.width}))`;
  // studentRow()'s created_at: whole seconds into the year plus n % 1000 ms, as TypeORM's text.
  const stamp = `strftime('%Y-%m-%d %H:%M:%f', (${EPOCH_MS} + ((n * 7919) % ${YEAR_SECONDS}) * 1000 + n % 1000) / 1000.0, 'unixepoch')`;
  const { columns, select } = studentInsert(
    {
      id: `printf('stu_B%s%024d', :tag, n)`,
      organization_id: ':org',
      student_number: `printf('S%07d', n)`,
      first_name: 'f',
      last_name: 'l',
      preferred_name: 'NULL',
      email: `lower(f || '.' || l || n || '@demo-school.example')`,
      date_of_birth: `'2012-05-17'`,
      status,
      grade_level: 'n % 13',
      created_at: 'c',
      updated_at: 'c',
    },
    { file: __filename },
  );
  const insert = db.prepare(
    `WITH RECURSIVE r(n) AS (SELECT CAST(:from AS INTEGER) UNION ALL SELECT n + 1 FROM r WHERE n < :to)
     INSERT INTO students (${columns})
     SELECT ${select}
     FROM (SELECT n, ${first} AS f, ${last} AS l, ${stamp} AS c FROM r)`,
  );
  return {
    insert,
    lists: { firsts: firsts.list, lasts: lasts.list, statuses: statuses.list },
  };
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
  const { insert, lists } = rowInsert(db);
  db.transaction(() => {
    for (const o of before.droppable) db.exec(`DROP ${o.type.toUpperCase()} "${o.name}"`);
    step('drop');
    const lastRowid = db.prepare('SELECT COALESCE(MAX(rowid), 0) AS m FROM students').get().m;
    const lastKey = db
      .prepare('SELECT COALESCE(MAX(key), 0) AS m FROM students_search_keys')
      .get().m;
    for (const { orgTag, orgId, from, to } of ranges)
      insert.run({ from, to, tag: orgTag, org: orgId, ...lists });
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
  const get = db.prepare(`SELECT ${COLUMNS} FROM students WHERE id = ?`);
  for (const { orgTag, orgId, from, to } of ranges) {
    const sample = new Set([from, to]);
    for (let k = 0; k < 200; k++) sample.add(from + Math.floor(Math.random() * (to - from + 1)));
    for (const n of sample) {
      const expected = studentRow(orgTag, orgId, n);
      const actual = get.get(expected.id);
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

/**
 * The `INSERT … SELECT` that builds studentRow()'s values in PostgreSQL, rows $3..$4 of the
 * organization $2 tagged $1.
 */
function postgresRowInsert() {
  const arr = (xs) => `ARRAY[${xs.map((x) => `'${x}'`).join(',')}]`;
  const first = `(${arr(FIRST_NAMES)})[1 + n % ${FIRST_NAMES.length}]`;
  const last = `(${arr(LAST_NAMES)})[1 + n % ${LAST_NAMES.length}]`;
  const created = `(timestamptz '2025-01-01 00:00:00+00' + ((n::bigint * 7919) % ${YEAR_SECONDS}) * interval '1 second' + (n % 1000) * interval '1 millisecond')`;
  const { columns, select } = studentInsert(
    {
      id: `'stu_B' || $1::text || lpad(n::text, 24, '0')`,
      organization_id: '$2::text',
      student_number: `'S' || lpad(n::text, 7, '0')`,
      first_name: first,
      last_name: last,
      preferred_name: 'NULL',
      email: `lower(${first} || '.' || ${last} || n || '@demo-school.example')`,
      date_of_birth: `'2012-05-17'`,
      status: `(${arr(STATUSES)})[1 + n % ${STATUSES.length}]`,
      grade_level: 'n % 13',
      created_at: created,
      updated_at: created,
    },
    { file: __filename },
  );
  return `INSERT INTO students (${columns})
    SELECT ${select} FROM generate_series($3::int, $4::int) AS n`;
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
    const insert = postgresRowInsert();
    for (const { orgTag, orgId, from, to } of ranges)
      await client.query(insert, [orgTag, orgId, from, to]);
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

module.exports = { seedPostgres, seedSqlite };
