'use strict';
/**
 * Students-list load benchmark: the real server against a bare node:http baseline, same run,
 * same SQLite file, same machine. See README.md for what it measures and how to read it.
 *
 *   pnpm bench                      (builds the server, then runs this)
 *   BENCH_DURATION=30 pnpm bench    (seconds per case; default 10)
 *
 * Other knobs: BENCH_WARMUP (s per case, default 2), BENCH_WARMUP_REQUESTS (to each server before
 * anything is measured, default 3000), BENCH_ROUNDS (repeat all cases, report the median; default 1),
 * BENCH_CONNECTIONS (default 10),
 * BENCH_CPU_PROF=1 (profile each measured case in the server under load and print the top
 * self-time functions; figures are then distorted by the profiler), BENCH_ENFORCE_GOALS=1 (exit 1
 * when a goal is missed).
 *
 * BENCH_DATABASE=postgres runs the same cases on PostgreSQL: a database of its own is created on
 * the server at BENCH_POSTGRES_URL (default TEST_DATABASE_URL), and dropped afterwards; the
 * baseline then uses node-postgres.
 */
// Loopback only: this run and every process it starts refuse any other address (tooling/hermetic).
require('@platform/hermetic').enforceForRun();
const { spawn, spawnSync } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const autocannon = require('autocannon');
const { isDeepStrictEqual } = require('node:util');
const { pageWithTotalStatement, tallyStatement } = require('./lib/bare-list-sql');
const { envNumber, serverNodeFlags } = require('./lib/harness');

const REPO_ROOT = path.resolve(__dirname, '..');
const SERVER_MAIN = path.join(REPO_ROOT, 'apps', 'server', 'dist', 'main.js');
const CLI_MAIN = path.join(REPO_ROOT, 'apps', 'server', 'dist', 'cli', 'main.js');
const BARE_MAIN = path.join(__dirname, 'bare-students-server.js');
const PEER_MAIN = path.join(__dirname, 'nest-peer-server.js');
const RESULTS_DIR = path.join(__dirname, 'results');
const PROFILER_PRELOAD = path.join(__dirname, 'profiling', 'inspector-profiler.js');

/** A failure the benchmark explains itself (no stack trace). */
class BenchError extends Error {}

const STUDENTS = 10_000;
const PER_PAGE = 25;
const PAGES = [1, 300];
/** Far above anything the load can reach in a minute, so the rate limiter never answers 429. */
const RATE_LIMIT_PER_MINUTE = 1_000_000;

const GOALS = {
  // Issue 17: the server keeps at least this share of the bare baseline's throughput (goal 1 on
  // SQLite, goal 2 on PostgreSQL against node-postgres).
  serverOverBarePage1: { sqlite: { min: 0.7 }, postgres: { min: 0.6 } },
  serverDeepPageCost: { max: 1.5 },
  // Issue 43: at least this many times the throughput of the list the frameworks' docs teach.
  serverOverPeerPage1: { min: 1.5 },
  // Context only: how much a deep page costs the baseline doing the same SQL.
  bareDeepPageCost: null,
};

let config;
try {
  config = readConfig();
} catch (error) {
  console.error(`BENCHMARK FAILED: ${error.message}`);
  process.exit(2);
}

function readConfig() {
  return {
    durationSec: envNumber('BENCH_DURATION', 10, { min: 1 }),
    warmupSec: envNumber('BENCH_WARMUP', 2, { min: 0 }),
    // The server's JIT needs a few thousand requests to settle (the first ~2000 cost up to twice
    // the CPU of later ones), far more than a 2 s per-case warm-up gives it at its throughput.
    warmupRequests: envNumber('BENCH_WARMUP_REQUESTS', 3000, { min: 0 }),
    rounds: Math.round(envNumber('BENCH_ROUNDS', 1, { min: 1 })),
    connections: envNumber('BENCH_CONNECTIONS', 10, { min: 1 }),
    cpuProfile: process.env.BENCH_CPU_PROF === '1',
    // The NestJS + TypeORM peer (nest-peer-server.js); the CI gate leaves it out (BENCH_PEER=0).
    peer: process.env.BENCH_PEER !== '0',
    enforceGoals: process.env.BENCH_ENFORCE_GOALS === '1',
    ...databaseConfig(),
  };
}

function databaseConfig() {
  const database = process.env.BENCH_DATABASE || 'sqlite';
  if (database === 'sqlite') return { database };
  if (database !== 'postgres') {
    throw new BenchError(`BENCH_DATABASE must be sqlite or postgres (got '${database}')`);
  }
  const adminUrl = process.env.BENCH_POSTGRES_URL || process.env.TEST_DATABASE_URL;
  if (!adminUrl) {
    throw new BenchError(
      'BENCH_DATABASE=postgres needs BENCH_POSTGRES_URL (or TEST_DATABASE_URL): a PostgreSQL server where the benchmark may create and drop a database',
    );
  }
  const prefix = process.env.BENCH_POSTGRES_DATABASE_PREFIX || 'bench_students_';
  if (!/^[a-z_][a-z0-9_]{0,30}$/.test(prefix)) {
    throw new BenchError(`BENCH_POSTGRES_DATABASE_PREFIX must be a lowercase SQL name prefix`);
  }
  return { database, adminUrl, databaseName: `${prefix}${process.pid}_${Date.now()}` };
}

const RESULTS_FILE = path.join(
  RESULTS_DIR,
  config.database === 'sqlite' ? 'students-list.json' : `students-list-${config.database}.json`,
);
const PROFILES_DIR = path.join(
  RESULTS_DIR,
  config.database === 'sqlite' ? 'profiles' : `profiles-${config.database}`,
);

/** The server's own configuration variables (apps/server/src/config/env.ts): never inherited. */
const SERVER_ENV_KEYS = [
  'NODE_ENV',
  'HOST',
  'PORT',
  'DATABASE_URL',
  'DATABASE_MIGRATE_ON_START',
  'REDIS_URL',
  'WEBHOOK_SECRETS_KEY',
  'LOG_LEVEL',
  'PUBLIC_URL',
  'RATE_LIMIT_DEFAULT',
  'RATE_LIMIT_ANONYMOUS',
  'TRUST_PROXY',
  'DEV_BOOTSTRAP',
];

function log(message = '') {
  process.stdout.write(`${message}\n`);
}

// --- child processes and cleanup ---------------------------------------------------------

const children = new Set();
let tmpDir;
let cleaningUp;
let activeLoad;

function childEnv(extra) {
  const env = { ...process.env };
  for (const key of SERVER_ENV_KEYS) delete env[key];
  return { ...env, ...extra };
}

/** A child process whose output is kept (last lines) for when something goes wrong. */
function startChild(name, args, env, { ipc = false } = {}) {
  const child = spawn(process.execPath, args, {
    cwd: REPO_ROOT,
    env,
    stdio: ipc ? ['ignore', 'pipe', 'pipe', 'ipc'] : ['ignore', 'pipe', 'pipe'],
  });
  const record = {
    name,
    child,
    output: [],
    exited: false,
    exitCode: null,
    signal: null,
    stopping: false,
  };
  const keep = (stream) => (chunk) => {
    for (const line of chunk.toString().split('\n')) {
      if (!line) continue;
      record.output.push(`[${name} ${stream}] ${line}`);
      if (record.output.length > 60) record.output.shift();
    }
  };
  child.stdout.on('data', keep('stdout'));
  child.stderr.on('data', keep('stderr'));
  record.exitedPromise = new Promise((resolve) => {
    child.on('exit', (code, signal) => {
      record.exited = true;
      record.exitCode = code;
      record.signal = signal;
      if (!record.stopping && !cleaningUp) {
        log(`\n!! ${name} exited unexpectedly (code ${code}, signal ${signal})`);
        printOutput(record);
      }
      resolve();
    });
  });
  child.on('error', (error) => log(`!! could not start ${name}: ${error.message}`));
  children.add(record);
  return record;
}

function printOutput(record) {
  if (!record.output.length) return;
  log(`--- last output of ${record.name} ---`);
  for (const line of record.output) log(line);
  log(`--- end of ${record.name} output ---`);
}

/** Asks a child started with the profiler preload to start or stop profiling; waits for its answer. */
function profilerRequest(record, message, expect) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      record.child.off('message', onMessage);
      reject(new BenchError(`${record.name} did not answer ${message.type} within 30 s`));
    }, 30_000);
    const onMessage = (reply) => {
      if (reply?.type !== expect && reply?.type !== 'profile:error') return;
      clearTimeout(timer);
      record.child.off('message', onMessage);
      if (reply.type === 'profile:error')
        reject(new BenchError(`${record.name} profiler: ${reply.message}`));
      else resolve(reply);
    };
    record.child.on('message', onMessage);
    record.child.send(message);
  });
}

async function stopChild(record, signal = 'SIGTERM') {
  if (record.exited) return;
  record.stopping = true;
  record.child.kill(signal);
  const timeout = new Promise((resolve) => setTimeout(resolve, 10_000).unref());
  await Promise.race([record.exitedPromise, timeout]);
  if (!record.exited) {
    record.child.kill('SIGKILL');
    await record.exitedPromise;
  }
}

function removeTmpDir() {
  if (tmpDir) {
    fs.rmSync(tmpDir, { recursive: true, force: true });
    tmpDir = undefined;
  }
}

/** The PostgreSQL database this run created, until it is dropped. */
let createdDatabase;

/** Runs one statement on the PostgreSQL server (as its admin URL's user), in a client of its own. */
async function adminQuery(text) {
  const { Client } = require('pg');
  const client = new Client({ connectionString: config.adminUrl });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

async function createDatabase() {
  await adminQuery(`CREATE DATABASE "${config.databaseName}"`);
  createdDatabase = config.databaseName;
  const url = new URL(config.adminUrl);
  url.pathname = `/${config.databaseName}`;
  return url.toString();
}

async function dropDatabase() {
  if (!createdDatabase) return;
  const name = createdDatabase;
  createdDatabase = undefined;
  try {
    await adminQuery(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  } catch (error) {
    log(`!! could not drop the benchmark database ${name}: ${error.message}`);
  }
}

async function cleanup() {
  if (!cleaningUp) {
    cleaningUp = (async () => {
      await Promise.all([...children].map((record) => stopChild(record)));
      removeTmpDir();
      await dropDatabase();
    })();
  }
  return cleaningUp;
}

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    log(`\nReceived ${signal}: stopping the servers and removing the temporary database...`);
    cleanup().finally(() => process.exit(128 + os.constants.signals[signal]));
  });
}
// Last resort if the process ends without cleanup() having finished (e.g. process.exit elsewhere).
process.on('exit', () => {
  for (const record of children) if (!record.exited) record.child.kill('SIGKILL');
  removeTmpDir();
  if (createdDatabase) {
    // No more event loop here: drop it from a short-lived child instead.
    spawnSync(
      process.execPath,
      [
        '-e',
        `const { Client } = require('pg'); const c = new Client({ connectionString: process.argv[1] });
         c.connect().then(() => c.query(process.argv[2])).finally(() => c.end());`,
        config.adminUrl,
        `DROP DATABASE IF EXISTS "${createdDatabase}" WITH (FORCE)`,
      ],
      { cwd: __dirname, stdio: 'ignore', timeout: 15_000 },
    );
  }
});

// --- setup ---------------------------------------------------------------------------------

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/**
 * The server's database settings for the CLI and the server (the same for both): the SQLite
 * file, or the PostgreSQL database and the webhook secrets key PostgreSQL requires.
 */
function serverDatabaseEnv(database) {
  return database.url.startsWith('sqlite:')
    ? { DATABASE_URL: database.url }
    : { DATABASE_URL: database.url, WEBHOOK_SECRETS_KEY: database.webhookSecretsKey };
}

/** PostgreSQL is not migrated by the server at start: the CLI does it, as in production. */
function migrate(database) {
  const result = spawnSync(process.execPath, [CLI_MAIN, 'migrate', '--json'], {
    cwd: REPO_ROOT,
    env: childEnv({ ...serverDatabaseEnv(database), NODE_ENV: 'production', LOG_LEVEL: 'warn' }),
    encoding: 'utf8',
  });
  if (result.status !== 0) {
    throw new BenchError(
      `migrating failed (exit ${result.status}):\n${result.stdout}\n${result.stderr}`,
    );
  }
}

function seed(database) {
  const args = [
    CLI_MAIN,
    'seed',
    '--students',
    String(STUDENTS),
    '--rate-limit',
    String(RATE_LIMIT_PER_MINUTE),
    '--json',
  ];
  const result = spawnSync(process.execPath, args, {
    cwd: REPO_ROOT,
    env: childEnv({
      ...serverDatabaseEnv(database),
      NODE_ENV: 'production',
      LOG_LEVEL: 'warn',
    }),
    encoding: 'utf8',
    maxBuffer: 16 * 1024 * 1024,
  });
  let output;
  try {
    output = JSON.parse(result.stdout.slice(result.stdout.indexOf('{')));
  } catch {
    output = undefined;
  }
  if (result.status !== 0 || !output || output.error) {
    throw new BenchError(
      `seeding failed (exit ${result.status}): ${output?.error?.message ?? ''}\n${result.stdout}\n${result.stderr}`,
    );
  }
  if (
    output.students_created !== STUDENTS ||
    typeof output.token !== 'string' ||
    !output.organization_id
  ) {
    throw new BenchError(`unexpected seed output: ${result.stdout}`);
  }
  return { token: output.token, organizationId: output.organization_id };
}

/**
 * A confidential OAuth client of the organization (admin CLI), for the case that lists with an
 * OAuth access token instead of the personal one.
 */
function registerOAuthClient(database, organizationId) {
  const result = spawnSync(
    process.execPath,
    [
      CLI_MAIN,
      'oauth-clients:create',
      '--org',
      organizationId,
      '--name',
      'Bench',
      '--type',
      'confidential',
      '--scopes',
      'students:read',
      '--grants',
      'client_credentials',
      '--json',
    ],
    {
      cwd: REPO_ROOT,
      env: childEnv({ ...serverDatabaseEnv(database), NODE_ENV: 'production' }),
      encoding: 'utf8',
    },
  );
  const output = result.status === 0 ? JSON.parse(result.stdout) : undefined;
  if (!output?.client_secret)
    throw new BenchError(`registering the OAuth client failed: ${result.stderr}`);
  return output;
}

/** An access token from the server's token endpoint (client credentials grant). */
async function oauthAccessToken(base, client) {
  const res = await fetch(`${base}/oauth/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${Buffer.from(`${client.id}:${client.client_secret}`).toString('base64')}`,
    },
    body: new URLSearchParams({ grant_type: 'client_credentials', scope: 'students:read' }),
  });
  const body = await res.json();
  if (!res.ok || typeof body.access_token !== 'string') {
    throw new BenchError(`the token endpoint refused: ${JSON.stringify(body)}`);
  }
  return body.access_token;
}

async function waitReady(record, url, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  let lastError = 'no answer';
  while (Date.now() < deadline) {
    if (record.exited) throw new BenchError(`${record.name} exited before it was ready`);
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
      await res.arrayBuffer();
      if (res.ok) return;
      lastError = `HTTP ${res.status}`;
    } catch (error) {
      lastError = error.message;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  printOutput(record);
  throw new BenchError(
    `${record.name} was not ready at ${url} within ${timeoutMs / 1000} s (${lastError})`,
  );
}

// --- checks --------------------------------------------------------------------------------

function pageUrl(base, page) {
  return `${base}/v1/students?per_page=${PER_PAGE}&page=${page}`;
}

/** One request before the load: must be a 200 with a full page of the seeded organization. */
async function sample(target, page) {
  const url = pageUrl(target.base, page);
  const res = await fetch(url, { headers: target.headers });
  const text = await res.text();
  if (res.status !== 200) {
    throw new BenchError(
      `${target.name} page ${page}: expected 200, got ${res.status}: ${text.slice(0, 500)}`,
    );
  }
  let body;
  try {
    body = JSON.parse(text);
  } catch {
    throw new BenchError(
      `${target.name} page ${page}: response is not JSON: ${text.slice(0, 200)}`,
    );
  }
  if (!Array.isArray(body.data) || body.data.length !== PER_PAGE) {
    throw new BenchError(
      `${target.name} page ${page}: expected ${PER_PAGE} items, got ${body.data?.length}`,
    );
  }
  if (body.meta?.page !== page || body.meta?.total !== STUDENTS) {
    throw new BenchError(
      `${target.name} page ${page}: unexpected meta ${JSON.stringify(body.meta)}`,
    );
  }
  return { body, bytes: Buffer.byteLength(text) };
}

/** The baseline must answer exactly what the server answers, or it is not a baseline. */
function assertSameBody(server, bare, page) {
  const strip = (body) => ({
    ...body,
    links: Object.fromEntries(
      Object.entries(body.links).map(([k, v]) => [k, v && v.replace(/^https?:\/\/[^/]+/, '')]),
    ),
  });
  const a = JSON.stringify(strip(server));
  const b = JSON.stringify(strip(bare));
  if (a !== b) {
    let i = 0;
    while (i < a.length && a[i] === b[i]) i++;
    throw new BenchError(
      `page ${page}: the baseline's body differs from the server's at character ${i}:\n` +
        `  server: …${a.slice(Math.max(0, i - 80), i + 80)}…\n  bare:   …${b.slice(Math.max(0, i - 80), i + 80)}…`,
    );
  }
}

/**
 * The baseline must send the server's SQL, or it is not measuring the same work: for each page,
 * its statements (lib/bare-list-sql.js) must be, text and values, what the server's own list code
 * compiles for that request on this database (`studentListStatements`). The page past the end's
 * tally read is compared too, though these pages never need it.
 */
async function assertSameSql(database, organizationId) {
  const { studentListStatements } = require('@platform/server/testing');
  const dialect = database.url.startsWith('sqlite:') ? 'sqlite' : 'postgres';
  const same = (a, b) => a && a.text === b.text && isDeepStrictEqual(a.values, b.values);
  for (const page of PAGES) {
    const server = await studentListStatements(database.url, organizationId, {
      per_page: String(PER_PAGE),
      page: String(page),
    });
    const offset = (page - 1) * PER_PAGE;
    const pairs = [
      [
        'page',
        server.pageWithTotal,
        pageWithTotalStatement(dialect, organizationId, PER_PAGE, offset),
      ],
      ['tally', server.count, tallyStatement(dialect, organizationId)],
    ];
    for (const [what, ours, bare] of pairs) {
      if (!same(ours, bare)) {
        throw new BenchError(
          `page ${page}: the baseline's ${what} statement is not the server's:\n` +
            `  server: ${JSON.stringify(ours)}\n  bare:   ${JSON.stringify(bare)}`,
        );
      }
    }
  }
}

// --- load ----------------------------------------------------------------------------------

function percentile(sorted, p) {
  if (!sorted.length) return NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index];
}

/**
 * One autocannon run for `{ duration }` seconds or `{ amount }` requests; latencies are recorded
 * here at full (sub-ms) precision, statuses counted here too.
 */
function load(url, headers, length) {
  return new Promise((resolve, reject) => {
    const latencies = [];
    const statuses = {};
    const instance = autocannon(
      { url, headers, connections: config.connections, timeout: 10, ...length },
      (error, result) => {
        if (error) reject(error);
        else resolve({ result, latencies, statuses });
      },
    );
    instance.on('response', (_client, statusCode, _bytes, responseTime) => {
      statuses[statusCode] = (statuses[statusCode] ?? 0) + 1;
      latencies.push(responseTime);
    });
    activeLoad = instance;
  });
}

/** Any non-2xx answer, connection error or timeout under load is a problem to report. */
function loadProblems(label, phase, { result, statuses }) {
  const problems = [];
  const non2xx = Object.entries(statuses).filter(([code]) => !code.startsWith('2'));
  if (non2xx.length) {
    problems.push(
      `${label} (${phase}): non-2xx responses ${non2xx.map(([c, n]) => `${n}×${c}`).join(', ')}`,
    );
  }
  if (result.errors || result.timeouts) {
    problems.push(
      `${label} (${phase}): ${result.errors} connection errors, ${result.timeouts} timeouts`,
    );
  }
  return problems;
}

/** Brings a server's JIT to its steady state: `warmupRequests` requests spread over the pages. */
async function warmUp(target) {
  const started = Date.now();
  const problems = [];
  for (const page of PAGES) {
    const amount = Math.ceil(config.warmupRequests / PAGES.length);
    const run = await load(pageUrl(target.base, page), target.headers, { amount });
    problems.push(...loadProblems(`${target.name} page ${page}`, 'initial warm-up', run));
  }
  log(
    `  ${target.name.padEnd(6)} warmed up with ${config.warmupRequests} requests in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
  return problems;
}

async function runCase(target, page, round) {
  const url = pageUrl(target.base, page);
  const label = `${target.name} page ${page}`;
  const problems = [];

  process.stdout.write(
    `  ${(config.rounds > 1 ? `${round}/${config.rounds} ${label}` : label).padEnd(22)} `,
  );
  if (config.warmupSec > 0) {
    process.stdout.write(`warm-up ${config.warmupSec} s… `);
    problems.push(
      ...loadProblems(
        label,
        'warm-up',
        await load(url, target.headers, { duration: config.warmupSec }),
      ),
    );
  }
  process.stdout.write(`measuring ${config.durationSec} s… `);
  let profileFile;
  if (config.cpuProfile && round === 1) {
    profileFile = path.join(PROFILES_DIR, `${target.name}-page-${page}.cpuprofile`);
    await profilerRequest(target.record, { type: 'profile:start' }, 'profile:started');
  }
  const cpuBefore = cpuSeconds(target.record);
  const loadCpuBefore = process.cpuUsage();
  const run = await load(url, target.headers, { duration: config.durationSec });
  const cpuAfter = cpuSeconds(target.record);
  const loadCpu = process.cpuUsage(loadCpuBefore);
  if (profileFile)
    await profilerRequest(
      target.record,
      { type: 'profile:stop', file: profileFile },
      'profile:stopped',
    );
  problems.push(...loadProblems(label, 'load', run));
  if (target.record.exited) problems.push(`${label}: ${target.name} exited during the load`);

  const sorted = Float64Array.from(run.latencies).sort();
  const ok2xx = Object.entries(run.statuses).reduce(
    (n, [code, count]) => (code.startsWith('2') ? n + count : n),
    0,
  );
  const measured = {
    name: label,
    target: target.name,
    page,
    url,
    duration_s: run.result.duration,
    requests: run.latencies.length,
    requests_2xx: ok2xx,
    rps: ok2xx / run.result.duration,
    latency_ms: {
      p50: percentile(sorted, 50),
      p90: percentile(sorted, 90),
      p99: percentile(sorted, 99),
      max: sorted.length ? sorted[sorted.length - 1] : NaN,
      mean: sorted.reduce((a, b) => a + b, 0) / (sorted.length || 1),
    },
    // CPU the server process spent per answered request: unlike req/s, barely moved by other
    // processes competing for the cores, so it tells contention apart from real cost.
    cpu_ms_per_request:
      cpuBefore !== null && cpuAfter !== null && ok2xx
        ? ((cpuAfter - cpuBefore) * 1000) / ok2xx
        : null,
    cpu_utilization:
      cpuBefore !== null && cpuAfter !== null ? (cpuAfter - cpuBefore) / run.result.duration : null,
    load_generator_cpu_utilization: (loadCpu.user + loadCpu.system) / 1e6 / run.result.duration,
    bytes_per_response: run.result.requests.total
      ? Math.round(run.result.throughput.total / run.result.requests.total)
      : 0,
    status_codes: run.statuses,
    non_2xx: run.latencies.length - ok2xx,
    errors: run.result.errors,
    timeouts: run.result.timeouts,
    ...(profileFile && { cpu_profile: path.relative(REPO_ROOT, profileFile) }),
  };
  log(`${measured.rps.toFixed(0)} req/s${problems.length ? '  !! PROBLEMS' : ''}`);
  return { measured, problems };
}

// --- report --------------------------------------------------------------------------------

/** A goal is judged on req/s; `byCpu` is the same ratio from CPU time per request, for reference. */
function ratio(name, value, byCpu, goal) {
  if (!goal) {
    return {
      name,
      value,
      by_cpu_per_request: Number.isFinite(byCpu) ? byCpu : null,
      goal: '-',
      met: null,
    };
  }
  const met = goal.min !== undefined ? value >= goal.min : value <= goal.max;
  const text = goal.min !== undefined ? `>= ${goal.min.toFixed(2)}` : `<= ${goal.max.toFixed(2)}`;
  return {
    name,
    value,
    by_cpu_per_request: Number.isFinite(byCpu) ? byCpu : null,
    goal: text,
    met,
  };
}

const fixed = (value, digits) =>
  value === null || value === undefined || !Number.isFinite(value) ? '-' : value.toFixed(digits);

function table(rows, columns) {
  const widths = columns.map((c) =>
    Math.max(c.title.length, ...rows.map((r) => String(c.value(r)).length)),
  );
  const line = (cells) =>
    cells
      .map((cell, i) =>
        columns[i].align === 'left'
          ? String(cell).padEnd(widths[i])
          : String(cell).padStart(widths[i]),
      )
      .join('   ');
  return [
    line(columns.map((c) => c.title)),
    line(widths.map((w) => '-'.repeat(w))),
    ...rows.map((r) => line(columns.map((c) => c.value(r)))),
  ]
    .map((l) => `  ${l.trimEnd()}`)
    .join('\n');
}

function gitInfo() {
  const run = (args) => spawnSync('git', args, { cwd: REPO_ROOT, encoding: 'utf8' });
  const head = run(['rev-parse', 'HEAD']);
  if (head.status !== 0) return null;
  return { commit: head.stdout.trim(), dirty: run(['status', '--porcelain']).stdout.trim() !== '' };
}

/** Clock ticks per second of /proc/<pid>/stat times (sysconf CLK_TCK; 100 on Linux in practice). */
const CLOCK_TICKS = (() => {
  const result = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' });
  const n = Number(result.stdout?.trim());
  return Number.isFinite(n) && n > 0 ? n : 100;
})();

/** CPU seconds (user + system, all threads) a child has used so far; null off Linux. */
function cpuSeconds(record) {
  try {
    const stat = fs.readFileSync(`/proc/${record.child.pid}/stat`, 'utf8');
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return null;
  }
}

function peakRssMb(record) {
  try {
    const status = fs.readFileSync(`/proc/${record.child.pid}/status`, 'utf8');
    const kb = /VmHWM:\s+(\d+) kB/.exec(status);
    return kb ? Math.round(Number(kb[1]) / 1024) : null;
  } catch {
    return null;
  }
}

// --- main ----------------------------------------------------------------------------------

/** What is measured, on what, with which settings. */
function logHeader() {
  log(
    `Students list benchmark: GET /v1/students?per_page=${PER_PAGE}&page=N, ${STUDENTS} students, on ${config.database === 'sqlite' ? 'SQLite' : 'PostgreSQL'}`,
  );
  log(
    `  ${config.connections} connections, ${config.durationSec} s per case after a ${config.warmupSec} s warm-up` +
      `${config.rounds > 1 ? `, ${config.rounds} rounds (median reported)` : ''}; ` +
      `Node ${process.version}, ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? 'unknown'})`,
  );
  if (config.cpuProfile)
    log(
      '  BENCH_CPU_PROF=1: every measured case is CPU-profiled; figures are distorted by the profiler.',
    );
  log();
}

/** The database to seed: a file in tmpDir, or a fresh PostgreSQL database, migrated. */
async function prepareDatabase() {
  const database =
    config.database === 'sqlite'
      ? { url: `sqlite:${path.join(tmpDir, 'bench.sqlite')}` }
      : {
          url: await createDatabase(),
          webhookSecretsKey: crypto.randomBytes(32).toString('base64'),
        };
  if (config.database === 'postgres') migrate(database);
  return database;
}

/** Where the students go, for the log. */
function databaseLabel(database) {
  return config.database === 'sqlite'
    ? database.url.slice('sqlite:'.length)
    : `PostgreSQL database ${config.databaseName}`;
}

/**
 * The server and the bare baseline, started and ready, and the targets measured: the server with
 * a personal token and with an OAuth token, and the baseline.
 */
async function startTargets(database, organizationId, token) {
  const [serverPort, barePort] = [await freePort(), await freePort()];
  // Both with the heap flags `pnpm start` gives the server, so neither is measured on another GC.
  const profilerArgs = [
    ...serverNodeFlags(),
    ...(config.cpuProfile ? ['--require', PROFILER_PRELOAD] : []),
  ];
  if (config.cpuProfile) {
    fs.rmSync(PROFILES_DIR, { recursive: true, force: true });
    fs.mkdirSync(PROFILES_DIR, { recursive: true });
  }

  const server = startChild(
    'server',
    [...profilerArgs, SERVER_MAIN],
    childEnv({
      ...serverDatabaseEnv(database),
      HOST: '127.0.0.1',
      PORT: String(serverPort),
      LOG_LEVEL: 'warn',
      NODE_ENV: 'production',
    }),
    { ipc: config.cpuProfile },
  );
  const bare = startChild(
    'bare',
    [...profilerArgs, BARE_MAIN],
    childEnv({
      ...(config.database === 'sqlite'
        ? { BARE_DATABASE: database.url.slice('sqlite:'.length) }
        : { BARE_DATABASE_URL: database.url }),
      BARE_ORGANIZATION_ID: organizationId,
      HOST: '127.0.0.1',
      PORT: String(barePort),
    }),
    { ipc: true },
  );

  const targets = {
    server: {
      name: 'server',
      record: server,
      base: `http://127.0.0.1:${serverPort}`,
      headers: { authorization: `Bearer ${token}` },
    },
    bare: { name: 'bare', record: bare, base: `http://127.0.0.1:${barePort}`, headers: {} },
  };
  await Promise.all([
    waitReady(server, `${targets.server.base}/health/ready`),
    waitReady(bare, `${targets.bare.base}/health/ready`),
  ]);
  log(
    `server (node apps/server/dist/main.js) on ${targets.server.base}, bare baseline on ${targets.bare.base}`,
  );
  // The same server and page, authenticated with an OAuth access token (client credentials).
  targets.oauth = {
    name: 'server (OAuth token)',
    record: server,
    base: targets.server.base,
    headers: {
      authorization: `Bearer ${await oauthAccessToken(targets.server.base, registerOAuthClient(database, organizationId))}`,
    },
  };
  if (config.peer) targets.peer = await startPeer(database, token);
  return { server, bare, targets };
}

/** The NestJS + TypeORM peer on the same database, with the server's token. */
async function startPeer(database, token) {
  const port = await freePort();
  const record = startChild(
    'peer',
    [...serverNodeFlags(), PEER_MAIN],
    childEnv({
      ...(config.database === 'sqlite'
        ? { PEER_DATABASE: database.url.slice('sqlite:'.length) }
        : { PEER_DATABASE_URL: database.url }),
      HOST: '127.0.0.1',
      PORT: String(port),
    }),
  );
  const base = `http://127.0.0.1:${port}`;
  await waitReady(record, `${base}/health/ready`);
  log(`NestJS + TypeORM peer (bench/nest-peer-server.js) on ${base}`);
  return {
    name: 'NestJS + TypeORM peer',
    record,
    base,
    headers: { authorization: `Bearer ${token}` },
  };
}

/** The baseline's bodies and statements are the server's; the response sizes, per page. */
async function checkSamples(targets, database, organizationId) {
  const bytes = {};
  for (const page of PAGES) {
    const s = await sample(targets.server, page);
    const b = await sample(targets.bare, page);
    assertSameBody(s.body, b.body, page);
    bytes[page] = { server: s.bytes, bare: b.bytes };
  }
  await assertSameSql(database, organizationId);
  log(
    `Sample responses: 200 with ${PER_PAGE} items on pages ${PAGES.join(' and ')}; the baseline's bodies equal the server's, and so do its statements.`,
  );
  log();
  return bytes;
}

/** Who is measured on page 1: the server (both tokens), the baseline and the peer if run. */
function pageOneTargets(targets) {
  return [targets.server, targets.oauth, targets.bare, ...(targets.peer ? [targets.peer] : [])];
}

/** Every case, each round interleaved, reported by its median round; the problems met. */
async function measure(targets) {
  const problems = [];
  if (config.warmupRequests > 0) {
    for (const target of pageOneTargets(targets)) problems.push(...(await warmUp(target)));
    log();
  }

  // Interleaved so that any drift of the machine during the run hits both alike.
  const runs = new Map();
  for (let round = 1; round <= config.rounds; round++) {
    for (const page of PAGES) {
      const measuredTargets = page === 1 ? pageOneTargets(targets) : [targets.server, targets.bare];
      for (const target of measuredTargets) {
        const { measured, problems: found } = await runCase(target, page, round);
        runs.set(measured.name, [...(runs.get(measured.name) ?? []), measured]);
        problems.push(...found);
      }
    }
  }
  // With several rounds, each case reports its median round (by req/s), whole, so that its
  // latencies and CPU figures come from the same run as its throughput.
  const cases = [...runs.values()].map((rounds) => {
    const median = [...rounds].sort((a, b) => a.rps - b.rps)[Math.floor((rounds.length - 1) / 2)];
    const profiled = rounds.find((r) => r.cpu_profile)?.cpu_profile;
    return {
      ...median,
      ...(profiled && { cpu_profile: profiled }),
      ...(rounds.length > 1 && {
        rounds: rounds.map((r) => ({
          rps: r.rps,
          p50_ms: r.latency_ms.p50,
          p99_ms: r.latency_ms.p99,
          cpu_ms_per_request: r.cpu_ms_per_request,
        })),
      }),
    };
  });
  return { cases, problems };
}

/** The ratios the goals judge, by req/s and by CPU per request. */
function ratiosOf(cases) {
  const byName = Object.fromEntries(cases.map((c) => [c.name, c]));
  const rps = (name) => byName[name].rps;
  const cpu = (name) => byName[name].cpu_ms_per_request ?? NaN;
  const ratios = [
    ratio(
      'server / bare throughput, page 1',
      rps('server page 1') / rps('bare page 1'),
      cpu('bare page 1') / cpu('server page 1'),
      GOALS.serverOverBarePage1[config.database],
    ),
    ratio(
      'server cost, page 300 / page 1',
      rps('server page 1') / rps('server page 300'),
      cpu('server page 300') / cpu('server page 1'),
      GOALS.serverDeepPageCost,
    ),
    ratio(
      'OAuth token / personal token throughput, page 1',
      rps('server (OAuth token) page 1') / rps('server page 1'),
      cpu('server page 1') / cpu('server (OAuth token) page 1'),
      null,
    ),
    ratio(
      'bare cost, page 300 / page 1',
      rps('bare page 1') / rps('bare page 300'),
      cpu('bare page 300') / cpu('bare page 1'),
      GOALS.bareDeepPageCost,
    ),
  ];
  if (byName['NestJS + TypeORM peer page 1']) {
    ratios.push(
      ratio(
        'server / NestJS + TypeORM peer throughput, page 1',
        rps('server page 1') / rps('NestJS + TypeORM peer page 1'),
        cpu('NestJS + TypeORM peer page 1') / cpu('server page 1'),
        GOALS.serverOverPeerPage1,
      ),
    );
  }
  return ratios;
}

/** The cases and ratios tables, and how to read them. */
function printResults(cases, ratios, bytes) {
  log();
  log('Results');
  log(
    table(cases, [
      { title: 'case', value: (c) => c.name, align: 'left' },
      { title: 'req/s', value: (c) => c.rps.toFixed(1) },
      { title: 'p50 ms', value: (c) => c.latency_ms.p50.toFixed(2) },
      { title: 'p99 ms', value: (c) => c.latency_ms.p99.toFixed(2) },
      { title: 'CPU ms/req', value: (c) => fixed(c.cpu_ms_per_request, 2) },
      {
        title: 'CPU %',
        value: (c) => fixed(c.cpu_utilization === null ? null : c.cpu_utilization * 100, 0),
      },
      { title: 'requests', value: (c) => c.requests },
      { title: 'non-2xx', value: (c) => c.non_2xx },
      { title: 'errors', value: (c) => c.errors + c.timeouts },
    ]),
  );
  log();
  log(
    table(ratios, [
      { title: 'ratio', value: (r) => r.name, align: 'left' },
      { title: 'value', value: (r) => r.value.toFixed(2) },
      { title: 'by CPU/req', value: (r) => fixed(r.by_cpu_per_request, 2) },
      { title: 'goal', value: (r) => r.goal },
      { title: 'met', value: (r) => (r.met === null ? '-' : r.met ? 'yes' : 'NO'), align: 'left' },
    ]),
  );
  log();
  log(
    '  Goals are judged on req/s. Cost ratio = req/s at page 1 / req/s at page 300 (1.00: a deep page costs',
  );
  log(
    '  the same as the first). "by CPU/req" is the same ratio from the CPU time each process spent per',
  );
  log(
    "  request (CPU ms/req; CPU % is that process's use of one core during the case): if it agrees with",
  );
  log(
    '  the req/s ratio, the result is not an artefact of other processes competing for the CPUs.',
  );
  log(
    `  Load generator: ${cases.map((c) => `${fixed(c.load_generator_cpu_utilization * 100, 0)}%`).join(' / ')} of a core per case;` +
      ` response size ${bytes[1].server} B (server) / ${bytes[1].bare} B (bare) at page 1.`,
  );
}

/** With BENCH_CPU_PROF, each case's CPU profile summarized, printed and returned by case name. */
function profileSummaries(cases) {
  const profiles = {};
  const { summarizeFile, format } = require('./profiling/summarize-cpu-profile');
  for (const c of cases) {
    const summary = summarizeFile(path.join(REPO_ROOT, c.cpu_profile), {
      top: c.target === 'server' ? 25 : 10,
    });
    profiles[c.name] = { file: c.cpu_profile, ...summary };
    log();
    log(
      format(summary, `CPU profile of ${c.name} (${c.cpu_profile})`, {
        origins: c.target === 'server' ? 15 : 5,
      }),
    );
  }
  return profiles;
}

/** The results file's content: the environment, the settings, every figure and the verdict. */
function resultsOf({ bytes, cases, ratios, memory, profiles, missed, problems }) {
  return {
    benchmark: 'students-list',
    generated_at: new Date().toISOString(),
    git: gitInfo(),
    environment: {
      node: process.version,
      platform: `${os.platform()} ${os.release()} ${os.arch()}`,
      cpus: os.cpus().length,
      cpu_model: os.cpus()[0]?.model ?? null,
      memory_gb: Math.round(os.totalmem() / 2 ** 30),
    },
    config: {
      database: config.database,
      students: STUDENTS,
      per_page: PER_PAGE,
      pages: PAGES,
      connections: config.connections,
      duration_s: config.durationSec,
      warmup_s: config.warmupSec,
      warmup_requests: config.warmupRequests,
      rounds: config.rounds,
      cpu_profile: config.cpuProfile,
    },
    response_bytes: bytes,
    cases,
    ratios,
    memory,
    ...(config.cpuProfile && { profiles }),
    goals_met: missed.length === 0,
    problems,
    ok: problems.length === 0,
  };
}

async function main() {
  for (const file of [SERVER_MAIN, CLI_MAIN]) {
    if (!fs.existsSync(file)) {
      throw new BenchError(
        `${path.relative(REPO_ROOT, file)} is missing: build the server first (pnpm --filter @platform/server build; \`pnpm bench\` does it).`,
      );
    }
  }

  logHeader();

  tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'platform-bench-'));
  const database = await prepareDatabase();
  log(`Seeding ${STUDENTS} students into ${databaseLabel(database)}…`);
  const { token, organizationId } = seed(database);

  const { server, bare, targets } = await startTargets(database, organizationId, token);

  const bytes = await checkSamples(targets, database, organizationId);

  const { cases, problems } = await measure(targets);
  const memory = { server_peak_rss_mb: peakRssMb(server), bare_peak_rss_mb: peakRssMb(bare) };

  const ratios = ratiosOf(cases);

  printResults(cases, ratios, bytes);

  const profiles = config.cpuProfile ? profileSummaries(cases) : {};

  const missed = ratios.filter((r) => r.met === false);
  const results = resultsOf({ bytes, cases, ratios, memory, profiles, missed, problems });
  fs.mkdirSync(RESULTS_DIR, { recursive: true });
  fs.writeFileSync(RESULTS_FILE, `${JSON.stringify(results, null, 2)}\n`);
  log();
  log(`Results written to ${path.relative(REPO_ROOT, RESULTS_FILE)}`);

  log();
  if (problems.length) {
    log(
      `FAILED: ${problems.length} problem(s) during the load; the figures above are not trustworthy:`,
    );
    for (const p of problems) log(`  - ${p}`);
    printOutput(server);
    return 1;
  }
  if (missed.length) {
    log(
      `Goals missed: ${missed.map((r) => `${r.name} = ${r.value.toFixed(2)} (goal ${r.goal})`).join('; ')}`,
    );
    return config.enforceGoals ? 1 : 0;
  }
  log('All goals met.');
  return 0;
}

main()
  .then(async (code) => {
    await cleanup();
    process.exitCode = code;
  })
  .catch(async (error) => {
    activeLoad?.stop?.();
    log();
    log(
      `BENCHMARK FAILED: ${error instanceof BenchError ? error.message : (error?.stack ?? error)}`,
    );
    await cleanup();
    process.exitCode = 1;
  });
