'use strict';
/**
 * Scale-out benchmark: the students list on PostgreSQL with one and with two server instances
 * (sharing PostgreSQL and the Redis rate limit), and webhook delivery through BullMQ against the
 * embedded default. Starts its own throwaway PostgreSQL and Redis (scripts/), separate from any
 * you run for development. See README.md.
 *
 *   pnpm bench                       (all benchmarks)
 *   node bench/scale-out.bench.js    (after `pnpm build`)
 *
 * Knobs: BENCH_DURATION (s per list case, default 10), BENCH_CONNECTIONS (default 10).
 */
// Loopback only: this run and every process it starts refuse any other address (tooling/hermetic).
require('@platform/hermetic').enforceForRun();
const { execFileSync, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const autocannon = require('autocannon');

const ROOT = path.resolve(__dirname, '..');
const { startInstances } = require(path.join(ROOT, 'scripts', 'scale-out.js'));
const RESULTS_DIR = path.join(__dirname, 'results');
const SCRIPT_ENV = {
  ...process.env,
  PLATFORM_PG_DIR: '/tmp/platform-pg-bench',
  PLATFORM_PG_PORT: '55498',
  PLATFORM_REDIS_DIR: '/tmp/platform-redis-bench',
  PLATFORM_REDIS_PORT: '56398',
};

const durationSec = Number(process.env.BENCH_DURATION || 10);
const connections = Number(process.env.BENCH_CONNECTIONS || 10);

function script(name, command) {
  return execFileSync(path.join(ROOT, 'scripts', name), [command], {
    env: SCRIPT_ENV,
    encoding: 'utf8',
  }).trim();
}

function load(url, token, seconds, conns) {
  return new Promise((resolve, reject) => {
    autocannon(
      {
        url: `${url}/v1/students?per_page=25&page=1`,
        headers: { Authorization: `Bearer ${token}` },
        connections: conns,
        duration: seconds,
      },
      (error, result) => (error ? reject(error) : resolve(result)),
    );
  });
}

/** Several autocannon runs at once (one per instance); their request rates add up. */
async function loadAll(urls, token, seconds) {
  const perInstance = Math.max(1, Math.round(connections / urls.length));
  const results = await Promise.all(urls.map((url) => load(url, token, seconds, perInstance)));
  const bad = results.reduce((n, r) => n + r.non2xx + r.errors + r.timeouts, 0);
  if (bad > 0)
    throw new Error(`${bad} failed requests under load: the figures are not trustworthy`);
  return {
    requestsPerSecond: Math.round(results.reduce((n, r) => n + r.requests.average, 0)),
    p99Ms: Math.max(...results.map((r) => r.latency.p99)),
  };
}

async function main() {
  const adminUrl = script('throwaway-postgres.sh', 'start');
  const redisUrl = script('throwaway-redis.sh', 'start');
  let cluster;
  try {
    cluster = await startInstances({ count: 2, databaseUrl: adminUrl, redisUrl, migrate: true });
    const seeded = cluster.cli('seed', '--students', '10000', '--rate-limit', '1000000000');
    const token = seeded.token;
    console.log(
      `List on PostgreSQL: ${durationSec} s per case, ${connections} connections in all ...`,
    );
    await loadAll(cluster.urls, token, 2); // warm-up, not measured
    const one = await loadAll(cluster.urls.slice(0, 1), token, durationSec);
    const two = await loadAll(cluster.urls, token, durationSec);
    await cluster.stop();
    cluster = undefined;

    console.log('Delivery through BullMQ (PostgreSQL + Redis) ...');
    const run = spawnSync(process.execPath, [path.join(__dirname, 'delivery.bench.js')], {
      env: {
        ...process.env,
        BENCH_DELIVERY_BACKEND: 'bullmq',
        BENCH_DATABASE_URL: adminUrl,
        BENCH_REDIS_URL: redisUrl,
      },
      stdio: 'inherit',
    });
    if (run.status !== 0) throw new Error('the BullMQ delivery benchmark failed');
    const read = (name) => {
      const file = path.join(RESULTS_DIR, name);
      return fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, 'utf8')) : null;
    };
    const bullmq = read('delivery-bullmq.json');
    const embedded = read('delivery.json');

    const results = {
      list: {
        oneInstance: one,
        twoInstances: two,
        ratio: Math.round((two.requestsPerSecond / one.requestsPerSecond) * 100) / 100,
      },
      delivery: {
        bullmq: bullmq && bullmq.throughput.deliveriesPerSecond,
        embedded: embedded && embedded.throughput.deliveriesPerSecond,
        ratio:
          bullmq && embedded
            ? Math.round(
                (bullmq.throughput.deliveriesPerSecond / embedded.throughput.deliveriesPerSecond) *
                  100,
              ) / 100
            : null,
        bullmqSteadyP99Ms: bullmq && bullmq.steady.commitToReceiptMs.p99,
      },
      machine: { cpus: os.cpus().length, node: process.version },
    };
    console.log('');
    console.log(
      `Scale-out on this ${os.cpus().length}-core machine (PostgreSQL + Redis, all on it):`,
    );
    console.log(`  list, 1 instance:   ${one.requestsPerSecond} req/s (p99 ${one.p99Ms} ms)`);
    console.log(
      `  list, 2 instances:  ${two.requestsPerSecond} req/s (p99 ${two.p99Ms} ms)   ratio ${results.list.ratio}`,
    );
    console.log(
      '  (both instances, PostgreSQL, Redis and the load generator share the same cores: read the ratio as an upper bound on contention, not as scaling)',
    );
    console.log(
      `  delivery: BullMQ ${results.delivery.bullmq}/s vs embedded ${results.delivery.embedded ?? 'not run'}/s   ratio ${results.delivery.ratio ?? 'n/a'}`,
    );
    fs.mkdirSync(RESULTS_DIR, { recursive: true });
    fs.writeFileSync(
      path.join(RESULTS_DIR, 'scale-out.json'),
      `${JSON.stringify(results, null, 2)}\n`,
    );
  } finally {
    if (cluster) await cluster.stop();
    script('throwaway-redis.sh', 'stop');
    script('throwaway-postgres.sh', 'stop');
  }
}

main().catch((error) => {
  console.error(`BENCHMARK FAILED: ${error.message}`);
  process.exit(1);
});
