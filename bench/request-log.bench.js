'use strict';
/**
 * What the request log costs (apps/server/src/request-logs): the students list under load on two
 * servers in this process, each on a database of its own with the same students, one recording
 * every request (REQUEST_LOG=true, the default) and one not (REQUEST_LOG=false), measured in
 * alternating rounds so a change in the machine's load hits both alike. The logging server's
 * entries are checked to have been written, so the figure includes the batched inserts.
 *
 *   pnpm --filter @platform/server build && pnpm exec node bench/request-log.bench.js
 *   BENCH_ONLY=request-log pnpm bench
 *
 * Knobs: BENCH_DURATION (s per round and server, default 5), BENCH_ROUNDS (default 4),
 * BENCH_CONNECTIONS (default 10). SQLite; BENCH_POSTGRES_URL runs it on PostgreSQL.
 */
require('@platform/hermetic').enforceForRun();
const autocannon = require('autocannon');
const path = require('node:path');
const { configFromEnv, envNumber, writeResults } = require('./lib/harness');

const RESULTS_FILE = path.join(__dirname, 'results', 'request-log.json');
/** The list with logging keeps at least this share of its throughput without. */
const GOAL_MIN_RATIO = 0.9;
const STUDENTS = 2000;

const config = configFromEnv(() => ({
  durationSec: envNumber('BENCH_DURATION', 5),
  rounds: envNumber('BENCH_ROUNDS', 4, { integer: true }),
  connections: envNumber('BENCH_CONNECTIONS', 10, { integer: true }),
  postgres: process.env.BENCH_POSTGRES_URL,
}));
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function start(logging) {
  const { startTestServer } = require('@platform/server/testing');
  const server = await startTestServer({
    env: {
      NODE_ENV: 'production',
      LOG_LEVEL: 'warn',
      WEBHOOK_DISPATCHER: 'false',
      REQUEST_LOG: String(logging),
    },
    ...(config.postgres && { postgresAdminUrl: config.postgres }),
  });
  const org = await server.createOrganization({
    name: 'Request log bench',
    plan: 'enterprise',
    rateLimitPerMinute: 100_000_000,
  });
  await server.insertStudents(org.id, STUDENTS);
  const { token } = await server.createToken(org.id, ['students:read']);
  return { server, token, logging };
}

async function load(s, durationSec) {
  const result = await autocannon({
    url: `${s.server.url}/v1/students?per_page=25&status=active`,
    connections: config.connections,
    duration: durationSec,
    headers: { authorization: `Bearer ${s.token}` },
  });
  if (result.non2xx > 0 || result.errors > 0)
    throw new Error(`${result.non2xx} non-2xx and ${result.errors} errors under load`);
  return {
    perSecond: result.requests.average,
    p50: result.latency.p50,
    total: result.requests.total,
  };
}

async function main() {
  const on = await start(true);
  const off = await start(false);
  const results = { on: [], off: [] };
  let logged = 0;
  try {
    // Warm-up, not measured: the JIT settles on both.
    await load(on, 2);
    await load(off, 2);
    for (let round = 0; round < config.rounds; round++) {
      for (const s of round % 2 ? [off, on] : [on, off]) {
        const r = await load(s, config.durationSec);
        results[s.logging ? 'on' : 'off'].push(r);
        if (s.logging) logged += r.total;
      }
    }
    // Every measured request of the logging server is in its log once the buffer is written.
    const { RequestLogWriter } = require(
      path.join(__dirname, '..', 'apps', 'server', 'dist', 'request-logs', 'request-log-writer'),
    );
    await on.server.app.get(RequestLogWriter).flush();
    const [{ n }] = await on.server.dataSource.query('SELECT COUNT(*) AS n FROM request_logs');
    if (Number(n) < logged) throw new Error(`only ${n} of ${logged} requests were logged`);
    const [{ n: none }] = await off.server.dataSource.query(
      'SELECT COUNT(*) AS n FROM request_logs',
    );
    if (Number(none) !== 0) throw new Error(`REQUEST_LOG=false still logged ${none} requests`);
  } finally {
    await on.server.close();
    await off.server.close();
  }
  const summary = (side) => ({
    perSecond: Math.round(median(results[side].map((r) => r.perSecond))),
    p50_ms: median(results[side].map((r) => r.p50)),
  });
  const withLog = summary('on');
  const without = summary('off');
  const ratio = Math.round((withLog.perSecond / without.perSecond) * 100) / 100;
  const database = config.postgres ? 'PostgreSQL' : 'SQLite';
  console.log(
    `\nGET /v1/students (25 a page) on ${database}, ${config.rounds} rounds of ${config.durationSec} s per server, ${config.connections} connections (median round)`,
  );
  console.log(`  request log on    ${withLog.perSecond}/s  p50 ${withLog.p50_ms} ms`);
  console.log(`  request log off   ${without.perSecond}/s  p50 ${without.p50_ms} ms`);
  console.log(`  on / off          ${ratio} (goal >= ${GOAL_MIN_RATIO})`);
  const file = writeResults(RESULTS_FILE, 'request-log', {
    config: { ...config, postgres: Boolean(config.postgres), students: STUDENTS },
    with_log: withLog,
    without_log: without,
    ratio,
    goal_min_ratio: GOAL_MIN_RATIO,
    met: ratio >= GOAL_MIN_RATIO,
    logged_requests: logged,
  });
  console.log(`\nResults written to ${file}`);
}

main().catch((error) => {
  console.error(`BENCHMARK FAILED: ${error.message}`);
  process.exit(1);
});
