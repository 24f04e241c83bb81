'use strict';
/**
 * `q` search benchmark: what one large tenant's searches cost, and what they do to a small
 * tenant's list latency, on the real server (SQLite, one process). See README.md.
 *
 *   pnpm --filter @platform/server build && node bench/search.bench.js
 *
 * Knobs: BENCH_STUDENTS (large tenant, default 50000), BENCH_SEARCHES (sequential requests per
 * search case, default 40), BENCH_DURATION (seconds per fairness case, default 10),
 * BENCH_CONNECTIONS (concurrent searches in the background load, default 4).
 */
// Loopback only: this run and every process it starts refuse any other address (tooling/hermetic).
require('@platform/hermetic').enforceForRun();
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const autocannon = require('autocannon');
const harness = require('./lib/harness');

const {
  REPO_ROOT,
  SERVER_MAIN,
  CLI_MAIN,
  freePort,
  waitReady,
  summarize,
  sequential,
  writeResults,
  configFromEnv,
  envNumber,
  serverNodeFlags,
} = harness;
const cli = (databasePath, args) => harness.cli(`sqlite:${databasePath}`, args);
const RESULTS_FILE = path.join(__dirname, 'results', 'search.json');

const config = configFromEnv(() => ({
  students: envNumber('BENCH_STUDENTS', 50_000),
  searches: envNumber('BENCH_SEARCHES', 40),
  durationSec: envNumber('BENCH_DURATION', 10),
  connections: envNumber('BENCH_CONNECTIONS', 4),
}));
const SMALL_STUDENTS = 200;
const RATE_LIMIT = 1_000_000;

/**
 * What a school searches for: a surname, a student number, an email local part (selective), and
 * the email domain every student shares (matches nearly the whole tenant: the worst case).
 */
const SEARCHES = [
  { name: 'surname', q: 'nakamura' },
  { name: 'student number', q: 'S012345' },
  { name: 'email local part', q: 'olivia.patel' },
  { name: 'shared email domain', q: 'demo-school' },
];

const log = (message = '') => process.stdout.write(`${message}\n`);

let tmpDir;
let server;
function cleanup() {
  if (server && server.exitCode === null) server.kill('SIGKILL');
  if (tmpDir) fs.rmSync(tmpDir, { recursive: true, force: true });
  tmpDir = undefined;
}
process.on('exit', cleanup);
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(130));

/** Sequential requests for `seconds`, while whatever else is running keeps running. */
async function sequentialFor(url, token, seconds) {
  const latencies = [];
  const statuses = {};
  const end = performance.now() + seconds * 1000;
  while (performance.now() < end) {
    const started = performance.now();
    const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
    await res.arrayBuffer();
    latencies.push(performance.now() - started);
    statuses[res.status] = (statuses[res.status] ?? 0) + 1;
  }
  return { ...summarize(latencies), statuses };
}

function backgroundLoad(url, token, seconds) {
  return new Promise((resolve, reject) => {
    const statuses = {};
    const instance = autocannon(
      {
        url,
        headers: { authorization: `Bearer ${token}` },
        connections: config.connections,
        duration: seconds,
        timeout: 30,
      },
      (error, result) => (error ? reject(error) : resolve({ result, statuses })),
    );
    instance.on('response', (_c, status) => {
      statuses[status] = (statuses[status] ?? 0) + 1;
    });
  });
}

/** The large tenant, seeded with a school year, and a small tenant with a token and no data yet. */
function seedTenants(db) {
  log(`Seeding the large tenant: ${config.students} students (and their school year)…`);
  const started = Date.now();
  const big = cli(db, [
    'seed',
    '--students',
    String(config.students),
    '--rate-limit',
    String(RATE_LIMIT),
  ]);
  const seedSeconds = (Date.now() - started) / 1000;
  log(`  ${seedSeconds.toFixed(1)} s`);
  const smallOrg = cli(db, [
    'orgs:create',
    '--name',
    'Small School',
    '--plan',
    'enterprise',
    '--rate-limit',
    String(RATE_LIMIT),
  ]);
  const smallToken = cli(db, [
    'tokens:create',
    '--org',
    smallOrg.id,
    '--name',
    'bench',
    '--scopes',
    'students:read,students:write',
  ]).token;
  return { big, smallToken, seedSeconds };
}

/** The server on `db`, in production mode and logging warnings only. */
function startServer(db, port) {
  return spawn(process.execPath, [...serverNodeFlags(), SERVER_MAIN], {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      DATABASE_URL: `sqlite:${db}`,
      HOST: '127.0.0.1',
      PORT: String(port),
      NODE_ENV: 'production',
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

/** The small tenant's students, created through the API. */
async function addSmallStudents(base, smallToken) {
  for (let i = 0; i < SMALL_STUDENTS; i++) {
    const res = await fetch(`${base}/v1/students`, {
      method: 'POST',
      headers: { authorization: `Bearer ${smallToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        student_number: `SM-${i}`,
        first_name: `Small${i}`,
        last_name: 'Student',
      }),
    });
    if (res.status !== 201) throw new Error(`creating a small-tenant student: ${res.status}`);
  }
}

/** Each of SEARCHES, `config.searches` sequential requests, logged as it completes. */
async function measureSearches(searchUrl, token) {
  const searches = [];
  for (const s of SEARCHES) {
    const r = await sequential(searchUrl(s.q), token, config.searches);
    const parsed = JSON.parse(r.firstBody);
    const total = parsed.meta?.total ?? null;
    searches.push({ ...s, total, code: parsed.code ?? null, ...r, firstBody: undefined });
    log(
      `  ${s.name.padEnd(20)} q=${s.q.padEnd(14)} total ${String(total ?? '-').padStart(6)}  ` +
        `p50 ${r.p50_ms.toFixed(1).padStart(7)} ms  p99 ${r.p99_ms.toFixed(1).padStart(7)} ms  ` +
        `statuses ${JSON.stringify(r.statuses)}`,
    );
  }
  return searches;
}

async function main() {
  for (const file of [SERVER_MAIN, CLI_MAIN])
    if (!fs.existsSync(file))
      throw new Error(`${file} is missing: pnpm --filter @platform/server build`);

  tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'platform-search-bench-'));
  const db = path.join(tmpDir, 'bench.sqlite');
  const { big, smallToken, seedSeconds } = seedTenants(db);

  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  server = startServer(db, port);
  await waitReady(base);

  await addSmallStudents(base, smallToken);
  log(`Small tenant: ${SMALL_STUDENTS} students. Server on ${base}.`);
  log();

  const searchUrl = (q) => `${base}/v1/students?q=${encodeURIComponent(q)}&per_page=25`;
  const smallListUrl = `${base}/v1/students?per_page=25`;

  // Warm the JIT and SQLite's page cache on every path before measuring.
  for (const s of SEARCHES) await sequential(searchUrl(s.q), big.token, 5);
  await sequential(smallListUrl, smallToken, 50);

  log(`Large tenant's searches, ${config.searches} sequential requests each:`);
  const searches = await measureSearches(searchUrl, big.token);
  log();

  log(`Small tenant's list (per_page=25), sequential, ${config.durationSec} s per case:`);
  const fairness = [];
  const alone = await sequentialFor(smallListUrl, smallToken, config.durationSec);
  fairness.push({ case: 'alone', ...alone });
  for (const s of [SEARCHES[0], SEARCHES[3]]) {
    const load = backgroundLoad(searchUrl(s.q), big.token, config.durationSec + 1);
    await new Promise((r) => setTimeout(r, 500));
    const during = await sequentialFor(smallListUrl, smallToken, config.durationSec);
    const background = await load;
    fairness.push({
      case: `while the large tenant searches q=${s.q} (${config.connections} connections)`,
      ...during,
      background_rps: background.result.requests.average,
      background_statuses: background.statuses,
    });
  }
  for (const f of fairness)
    log(
      `  ${f.case.padEnd(62)} p50 ${f.p50_ms.toFixed(1).padStart(7)} ms  p99 ${f.p99_ms
        .toFixed(1)
        .padStart(7)} ms  max ${f.max_ms.toFixed(1).padStart(7)} ms` +
        (f.background_statuses
          ? `  (searches: ${f.background_rps} req/s, ${JSON.stringify(f.background_statuses)})`
          : ''),
    );

  const written = writeResults(RESULTS_FILE, 'search', {
    config: { ...config, small_students: SMALL_STUDENTS, seed_seconds: seedSeconds },
    searches,
    fairness,
  });
  log();
  log(`Results written to ${written}`);
}

main()
  .then(() => {
    cleanup();
    process.exit(0);
  })
  .catch((error) => {
    log(`BENCHMARK FAILED: ${error.message}`);
    cleanup();
    process.exit(1);
  });
