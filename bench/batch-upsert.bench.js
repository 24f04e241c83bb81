'use strict';
/**
 * Batch upserts (`POST /v1/students/batch`, issue 45) against a bare baseline in the same run:
 * rounds of `BENCH_BATCH` items, half new external ids and half existing ones with a changed
 * field. The server answers each batch over HTTP (validation, per-item rules, events with feed
 * positions, idempotency and rate limit as configured); the bare baseline runs the same upserts on
 * the same database through the server's own connection (`INSERT … ON CONFLICT (organization_id,
 * external_id) DO UPDATE`, one multi-row statement per batch, in a transaction) and nothing else.
 * The two alternate round by round, each in an organization of its own, so the machine's load
 * hits both alike.
 *
 *   pnpm --filter @platform/server build && node bench/batch-upsert.bench.js
 *   BENCH_POSTGRES_URL=postgres://…/postgres node bench/batch-upsert.bench.js   (PostgreSQL)
 *
 * Knobs: BENCH_ROUNDS (default 6, after one warm-up round each), BENCH_BATCH (items per batch,
 * default 1000). Loopback only. Writes bench/results/batch-upsert[-postgres].json.
 */
require('@platform/hermetic').enforceForRun();
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { API_VERSION } = require('@platform/contract');
const { configFromEnv, envNumber } = require('./lib/harness');

const config = configFromEnv(() => ({
  rounds: envNumber('BENCH_ROUNDS', 6, { integer: true }),
  batch: envNumber('BENCH_BATCH', 1000, { integer: true }),
  postgres: process.env.BENCH_POSTGRES_URL,
}));
const RESULTS_FILE = path.join(
  __dirname,
  'results',
  config.postgres ? 'batch-upsert-postgres.json' : 'batch-upsert.json',
);
/** Issue 45's goals: rows per second by database, and the server at half the bare baseline. */
const GOALS = { rowsPerSecond: config.postgres ? 3000 : 5000, ratio: 0.5 };
const now = () => performance.now();
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Round r's items: the second half of round r - 1's keys, changed, then as many new ones. */
function itemsOf(prefix, round) {
  const half = config.batch / 2;
  const key = (n) => `${prefix}-${n}`;
  return Array.from({ length: config.batch }, (_, i) => {
    const n = round * half + i;
    return {
      external_id: key(n),
      student_number: `${prefix}N${n}`,
      first_name: 'Batch',
      last_name: `Round ${round}`,
      grade_level: round % 12,
    };
  });
}

/** A statement's `$n` (PostgreSQL) or `?` (SQLite) placeholders, with their values in `params`. */
function placeholders() {
  const params = [];
  const p = (value) => {
    params.push(value);
    return config.postgres ? `$${params.length}` : '?';
  };
  return { params, p };
}

/** Round `round`'s timestamp, as each database's driver takes it. */
function stampOf(round) {
  const at = new Date(Date.UTC(2026, 0, 1) + round * 1000);
  return config.postgres ? at : at.toISOString().replace('T', ' ').replace('Z', '');
}

/** The bare upsert: the same rows, one INSERT … ON CONFLICT per batch. */
function upsertStatement(idPrefix, organizationId, items, round) {
  const { params, p } = placeholders();
  const stamp = stampOf(round);
  const tuples = items.map(
    (item, i) =>
      `(${p(`${idPrefix}${String(round).padStart(4, '0')}${String(i).padStart(18, '0')}`)}, ${p(organizationId)}, ${p(item.external_id)}, ${p(item.student_number)}, ${p(item.first_name)}, ${p(item.last_name)}, 'active', ${p(item.grade_level)}, ${p(stamp)}, ${p(stamp)})`,
  );
  const sql =
    'INSERT INTO students (id, organization_id, external_id, student_number, first_name, last_name, status, grade_level, created_at, updated_at) ' +
    `VALUES ${tuples.join(', ')} ` +
    'ON CONFLICT (organization_id, external_id) WHERE external_id IS NOT NULL DO UPDATE SET ' +
    'last_name = excluded.last_name, grade_level = excluded.grade_level, updated_at = excluded.updated_at';
  return [sql, params];
}

/** The bare baseline (goal 10's): the upserts alone, in a transaction. */
async function bareUpsert(dataSource, organizationId, items, round) {
  await dataSource.transaction((manager) =>
    manager.query(...upsertStatement('stu_BARE', organizationId, items, round)),
  );
}

/**
 * The bare baseline with the writes the server must add: the same upserts, then the counter of
 * the organization's change feed moved on by the batch, and one event per item (the student as
 * JSON, an update's previous fields) with its position: what a batch costs in SQL alone. The
 * server sends more (loads, and on PostgreSQL the numbering before COMMIT), so this is a floor.
 */
async function bareWithEvents(dataSource, organizationId, items, round, resource) {
  const half = config.batch / 2;
  const stamp = stampOf(round);
  const at = new Date(Date.UTC(2026, 0, 1) + round * 1000).toISOString();
  await dataSource.transaction(async (manager) => {
    await manager.query(...upsertStatement('stu_EVNT', organizationId, items, round));
    const [head] = await manager.query(
      config.postgres
        ? 'INSERT INTO feed_heads (organization_id, position) VALUES ($1, $2) ON CONFLICT (organization_id) DO UPDATE SET position = feed_heads.position + excluded.position RETURNING position'
        : 'INSERT INTO feed_heads (organization_id, position) VALUES (?, ?) ON CONFLICT (organization_id) DO UPDATE SET position = feed_heads.position + excluded.position RETURNING position',
      [organizationId, items.length],
    );
    const first = Number(head.position) - items.length + 1;
    const { params, p } = placeholders();
    const tuples = items.map((item, i) => {
      const updated = i < half;
      const data = JSON.stringify({
        ...resource,
        id: `stu_BARE${String(i).padStart(22, '0')}`,
        external_id: item.external_id,
        student_number: item.student_number,
        first_name: item.first_name,
        last_name: item.last_name,
        grade_level: item.grade_level,
        created_at: at,
        updated_at: at,
      });
      const previous = updated
        ? JSON.stringify({
            last_name: `Round ${round - 1}`,
            grade_level: (round - 1) % 12,
            updated_at: at,
          })
        : null;
      const id = `evt_BARE${String(round).padStart(4, '0')}${String(i).padStart(18, '0')}`;
      return `(${p(id)}, ${p(organizationId)}, ${p(updated ? 'student.updated' : 'student.created')}, ${p(API_VERSION)}, ${p(data)}, ${p(previous)}, ${p(stamp)}, ${p(first + i)})`;
    });
    await manager.query(
      'INSERT INTO events (id, organization_id, type, api_version, data, previous_attributes, created_at, position) ' +
        `VALUES ${tuples.join(', ')}`,
      params,
    );
  });
}

/**
 * Times every statement the data source's query runners send (from the call to its answer,
 * COMMIT included), so that a round's time splits into the database's and the rest: the sides
 * take turns, so what runs during a side's round is that side's.
 */
function statementClock(dataSource) {
  const runner = dataSource.createQueryRunner();
  const prototype = Object.getPrototypeOf(runner);
  void runner.release();
  const query = prototype.query;
  let spent = 0;
  prototype.query = async function timed(...args) {
    const t = now();
    try {
      return await query.apply(this, args);
    } finally {
      spent += now() - t;
    }
  };
  return { spent: () => spent };
}

/** Each side's time per round, and the part of it in statements, in ms; sides take turns first. */
async function measure(server) {
  const timings = { server: [], bare: [], events: [] };
  const inStatements = { server: [], bare: [], events: [] };
  const clock = statementClock(server.dataSource);
  const org = await server.createOrganization({
    name: 'Batches',
    plan: 'enterprise',
    rateLimitPerMinute: 10_000_000,
  });
  const bareOrg = await server.createOrganization({ name: 'Bare batches', plan: 'enterprise' });
  const eventsOrg = await server.createOrganization({ name: 'Bare events', plan: 'enterprise' });
  const { token } = await server.createToken(org.id, ['students:read', 'students:write']);
  const headers = { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' };
  const viaServer = async (round) => {
    const t = now();
    const res = await fetch(`${server.url}/v1/students/batch`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ items: itemsOf('S', round) }),
    });
    const body = await res.json();
    if (res.status !== 200 || body.counts.failed > 0)
      throw new Error(`batch ${round}: ${res.status} ${JSON.stringify(body).slice(0, 500)}`);
    return now() - t;
  };
  const bare = async (round) => {
    const t = now();
    await bareUpsert(server.dataSource, bareOrg.id, itemsOf('B', round), round);
    return now() - t;
  };
  // Round 0 of each (all new) warms up; rounds 1.. are half new, half changed.
  await viaServer(0);
  // The events' data has the fields of the server's own student resource.
  const fetched = await fetch(`${server.url}/v1/students/ext:S-0`, { headers });
  const resource = await fetched.json();
  if (fetched.status !== 200) throw new Error(`the student: ${fetched.status} ${resource.title}`);
  const withEvents = async (round) => {
    const t = now();
    await bareWithEvents(server.dataSource, eventsOrg.id, itemsOf('E', round), round, resource);
    return now() - t;
  };
  const sides = { server: viaServer, bare, events: withEvents };
  await bare(0);
  await withEvents(0);
  const order = Object.keys(sides);
  for (let round = 1; round <= config.rounds; round++) {
    const turn = round % order.length;
    for (const side of [...order.slice(turn), ...order.slice(0, turn)]) {
      const before = clock.spent();
      timings[side].push(await sides[side](round));
      inStatements[side].push(clock.spent() - before);
    }
  }
  return { timings, inStatements };
}

/** Prints the median round's rates and ratios, and writes them to RESULTS_FILE. */
function report({ timings, inStatements }) {
  const rowsPerSecond = (side) => Math.round(config.batch / (median(timings[side]) / 1000));
  const round2 = (x) => Math.round(x * 100) / 100;
  const serverRate = rowsPerSecond('server');
  const bareRate = rowsPerSecond('bare');
  const eventsRate = rowsPerSecond('events');
  const ratio = round2(serverRate / bareRate);
  const eventsRatio = round2(serverRate / eventsRate);
  const database = config.postgres ? 'PostgreSQL' : 'SQLite';
  const line = (label, value, unit = '') =>
    console.log(`  ${label.padEnd(32)} ${String(value).padStart(8)}${unit}`);
  console.log(
    `\nBatch upserts on ${database}: ${config.rounds} rounds of ${config.batch} items (half new, half changed), median round`,
  );
  line('server  POST /v1/students/batch', serverRate, ' rows/s');
  line('bare    INSERT … ON CONFLICT', bareRate, ' rows/s');
  line('bare with events and positions', eventsRate, ' rows/s');
  line('server / bare', ratio);
  line('server / bare with events', eventsRatio);
  line('bare with events / bare', round2(eventsRate / bareRate), '  (what the events cost in SQL)');
  // The ratio the server would have if only its statements took time (no JavaScript, no HTTP).
  const totalMs = (side) => round2(median(timings[side]));
  const statementsMs = (side) => round2(median(inStatements[side]));
  const ceiling = round2(median(timings.bare) / median(inStatements.server));
  for (const side of ['server', 'bare'])
    line(`${side} ms a batch in statements`, statementsMs(side), ` of ${totalMs(side)}`);
  line('server / bare, statements alone', ceiling, '  (the ratio with no JavaScript)');
  console.log(
    `  goals: >= ${GOALS.rowsPerSecond} rows/s ${serverRate >= GOALS.rowsPerSecond ? 'met' : 'MISSED'}; >= ${GOALS.ratio} of bare ${ratio >= GOALS.ratio ? 'met' : 'MISSED'}`,
  );
  fs.mkdirSync(path.dirname(RESULTS_FILE), { recursive: true });
  const results = {
    config: { ...config, postgres: Boolean(config.postgres) },
    server_rows_per_second: serverRate,
    bare_rows_per_second: bareRate,
    bare_with_events_rows_per_second: eventsRate,
    ratio,
    ratio_to_bare_with_events: eventsRatio,
    ms_per_batch: {
      server: totalMs('server'),
      server_statements: statementsMs('server'),
      bare: totalMs('bare'),
      bare_statements: statementsMs('bare'),
      bare_with_events: totalMs('events'),
      bare_with_events_statements: statementsMs('events'),
    },
    ratio_with_statements_alone: ceiling,
    goals: GOALS,
    machine: { cpus: os.cpus().length, node: process.version },
  };
  fs.writeFileSync(RESULTS_FILE, `${JSON.stringify(results, null, 2)}\n`);
  console.log(`\nResults written to ${path.relative(process.cwd(), RESULTS_FILE)}`);
}

async function main() {
  const { startTestServer } = require('@platform/server/testing');
  const server = await startTestServer({
    env: { NODE_ENV: 'production', WEBHOOK_DISPATCHER: 'false' },
    ...(config.postgres && { postgresAdminUrl: config.postgres }),
  });
  let timings;
  try {
    timings = await measure(server);
  } finally {
    await server.close();
  }
  report(timings);
}

main().catch((error) => {
  console.error(`BENCHMARK FAILED: ${error.message}`);
  process.exit(1);
});
