'use strict';
/**
 * What the list totals' tallies cost writes (apps/server/src/database/list-tallies.ts): two
 * servers in this process, each on a database of its own, one as migrated and one with the tally
 * triggers dropped, under the same writes in alternating bursts, so a change in the machine's
 * load hits both alike. Each burst creates students (POST /v1/students), then changes their
 * status (PATCH), `BENCH_CONCURRENCY` requests at a time.
 *
 *   pnpm --filter @platform/server build && node bench/write-cost.bench.js
 *   BENCH_POSTGRES_URL=postgres://…/postgres node bench/write-cost.bench.js   (PostgreSQL)
 *
 * Knobs: BENCH_BURSTS (per server, default 6), BENCH_BURST (writes per burst and kind, default
 * 400), BENCH_CONCURRENCY (default 10). Loopback only.
 */
require('@platform/hermetic').enforceForRun();
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { configFromEnv, envNumber } = require('./lib/harness');

const RESULTS_FILE = path.join(__dirname, 'results', 'write-cost.json');
const config = configFromEnv(() => ({
  bursts: envNumber('BENCH_BURSTS', 6, { integer: true }),
  burst: envNumber('BENCH_BURST', 400, { integer: true }),
  concurrency: envNumber('BENCH_CONCURRENCY', 10, { integer: true }),
  postgres: process.env.BENCH_POSTGRES_URL,
}));
const now = () => performance.now();
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** A server on a fresh database, an organization whose limit the writes never reach, a token. */
async function start(withTallies) {
  const { startTestServer } = require('@platform/server/testing');
  const server = await startTestServer({
    env: { NODE_ENV: 'production' },
    ...(config.postgres && { postgresAdminUrl: config.postgres }),
  });
  if (!withTallies) {
    const triggers = config.postgres
      ? await server.dataSource.query(
          `SELECT tgname AS name, tgrelid::regclass::text AS "table" FROM pg_trigger WHERE tgname LIKE 'list_tallies_%'`,
        )
      : await server.dataSource.query(
          `SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'list_tallies_%'`,
        );
    if (triggers.length === 0) throw new Error('no tally triggers to drop: is the server built?');
    for (const t of triggers)
      await server.dataSource.query(
        `DROP TRIGGER ${t.name}${config.postgres ? ` ON ${t.table}` : ''}`,
      );
  }
  const org = await server.createOrganization({
    name: 'Writes',
    plan: 'enterprise',
    rateLimitPerMinute: 10_000_000,
  });
  const { token } = await server.createToken(org.id, ['students:read', 'students:write']);
  return { server, token, withTallies, created: 0, ids: [] };
}

/** `count` requests, `config.concurrency` at a time; each must answer `status`. */
async function run(count, status, request) {
  let next = 0;
  const latencies = [];
  const worker = async () => {
    while (next < count) {
      const i = next++;
      const t = now();
      const res = await request(i);
      latencies.push(now() - t);
      if (res.status !== status) throw new Error(`${res.status}: ${await res.text()}`);
      await res.arrayBuffer();
    }
  };
  const t0 = now();
  await Promise.all(Array.from({ length: config.concurrency }, worker));
  return { perSecond: count / ((now() - t0) / 1000), p50: median(latencies) };
}

/** One burst on one server: creates, then a status change of each student it created. */
async function burst(s) {
  const headers = { Authorization: `Bearer ${s.token}`, 'Content-Type': 'application/json' };
  const ids = [];
  const create = await run(config.burst, 201, async (i) => {
    const n = s.created + i;
    const res = await fetch(`${s.server.url}/v1/students`, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        student_number: `W-${n}`,
        first_name: 'Write',
        last_name: `Cost${n}`,
        status: 'active',
      }),
    });
    if (res.status === 201) ids.push((await res.clone().json()).id);
    return res;
  });
  s.created += config.burst;
  const update = await run(ids.length, 200, (i) =>
    fetch(`${s.server.url}/v1/students/${ids[i]}`, {
      method: 'PATCH',
      headers,
      body: JSON.stringify({ status: 'inactive' }),
    }),
  );
  return { create, update };
}

async function main() {
  const servers = [await start(true), await start(false)];
  const results = { on: [], off: [] };
  try {
    // Warm-up: one burst each, not measured.
    for (const s of servers) await burst(s);
    for (let b = 0; b < config.bursts; b++) {
      for (const s of b % 2 ? [...servers].reverse() : servers)
        results[s.withTallies ? 'on' : 'off'].push(await burst(s));
    }
  } finally {
    for (const s of servers) await s.server.close();
  }
  const summary = (side, kind) => ({
    perSecond: Math.round(median(results[side].map((r) => r[kind].perSecond))),
    p50_ms: Math.round(median(results[side].map((r) => r[kind].p50)) * 10) / 10,
  });
  const table = ['create', 'update'].map((kind) => {
    const on = summary('on', kind);
    const off = summary('off', kind);
    return { kind, on, off, ratio: Math.round((on.perSecond / off.perSecond) * 100) / 100 };
  });
  console.log(
    `\nWrites on ${config.postgres ? 'PostgreSQL' : 'SQLite'}, ${config.bursts} bursts of ${config.burst} per server, ${config.concurrency} at a time (median burst)`,
  );
  console.log('  write                        tallies on          tallies off     on / off');
  for (const r of table)
    console.log(
      `  ${(r.kind === 'create' ? 'POST /v1/students' : 'PATCH status').padEnd(22)} ${`${r.on.perSecond}/s p50 ${r.on.p50_ms} ms`.padStart(20)} ${`${r.off.perSecond}/s p50 ${r.off.p50_ms} ms`.padStart(20)} ${String(r.ratio).padStart(10)}`,
    );
  fs.mkdirSync(path.dirname(RESULTS_FILE), { recursive: true });
  fs.writeFileSync(
    RESULTS_FILE,
    `${JSON.stringify({ config: { ...config, postgres: Boolean(config.postgres) }, table, machine: { cpus: os.cpus().length, node: process.version } }, null, 2)}\n`,
  );
  console.log(`\nResults written to ${path.relative(process.cwd(), RESULTS_FILE)}`);
}

main().catch((error) => {
  console.error(`BENCHMARK FAILED: ${error.message}`);
  process.exit(1);
});
