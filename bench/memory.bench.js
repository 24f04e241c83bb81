'use strict';
/**
 * Memory benchmark: the real server's resident set size (VmRSS) after warm-up and after
 * 100,000 requests of a realistic mix. Goal: it grows by at most 10 %. See README.md.
 *
 *   pnpm --filter @platform/server build && pnpm exec node bench/memory.bench.js
 *
 * Knobs: BENCH_REQUESTS (default 100000), BENCH_WARMUP_REQUESTS (default 5000),
 * BENCH_CONNECTIONS (default 10), BENCH_ENFORCE_GOALS=1 (exit 1 when the goal is missed),
 * BENCH_HEAP=1 (V8's heap every 10 s, and before and after a full GC once each RSS sample is
 * taken), BENCH_HEAP_SNAPSHOTS=1 (that, and a heap snapshot at both points into bench/results/;
 * compare them with profiling/compare-heap-snapshots.js), BENCH_SERVER_NODE_OPTIONS (V8 flags
 * for the server, to measure one).
 */
// Loopback only: this run and every process it starts refuse any other address (tooling/hermetic).
require('@platform/hermetic').enforceForRun();
const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const autocannon = require('autocannon');
const { configFromEnv, envNumber, freePort, serverNodeFlags } = require('./lib/harness');

const REPO_ROOT = path.resolve(__dirname, '..');
const SERVER_MAIN = path.join(REPO_ROOT, 'apps', 'server', 'dist', 'main.js');
const CLI_MAIN = path.join(REPO_ROOT, 'apps', 'server', 'dist', 'cli', 'main.js');
const RESULTS_FILE = path.join(__dirname, 'results', 'memory.json');
const HEAP_PROBE = path.join(__dirname, 'profiling', 'heap-probe.js');

const STUDENTS = 10_000;
const GOAL_MAX_GROWTH = 0.1;
/**
 * The server's configuration variables (apps/server/src/config/env.ts): never inherited, except
 * SQLITE_CACHE_MIB, so that another page cache size can be measured (bench/README.md).
 */
const SERVER_ENV_PREFIXES = [
  'DATABASE_',
  'REDIS_',
  'RATE_LIMIT_',
  'WEBHOOK',
  'LOG_',
  'PORT',
  'HOST',
];

const config = configFromEnv(() => ({
  requests: envNumber('BENCH_REQUESTS', 100_000, { integer: true }),
  warmupRequests: envNumber('BENCH_WARMUP_REQUESTS', 5_000, { integer: true }),
  connections: envNumber('BENCH_CONNECTIONS', 10, { integer: true }),
  enforceGoals: process.env.BENCH_ENFORCE_GOALS === '1',
  heapSnapshots: process.env.BENCH_HEAP_SNAPSHOTS === '1',
  heap: process.env.BENCH_HEAP === '1' || process.env.BENCH_HEAP_SNAPSHOTS === '1',
  /**
   * The server's Node flags: those of its production start command (`pnpm start`, the
   * Dockerfile's CMD, which must match), unless BENCH_SERVER_NODE_OPTIONS replaces them (set it
   * empty for Node's defaults).
   */
  serverNodeOptions: serverNodeFlags(),
}));

const log = (line) => console.log(line);
/** Students created so far (warm-up included): each needs a student number of its own. */
let created = 0;
let tmpDir;
let server;

function childEnv(extra) {
  const env = { ...process.env };
  for (const key of Object.keys(env)) {
    if (SERVER_ENV_PREFIXES.some((p) => key.startsWith(p))) delete env[key];
  }
  return { ...env, NODE_ENV: 'production', LOG_LEVEL: 'warn', ...extra };
}

function cli(databasePath, args) {
  const result = spawnSync(process.execPath, [CLI_MAIN, ...args, '--json'], {
    cwd: REPO_ROOT,
    env: childEnv({ DATABASE_URL: `sqlite:${databasePath}` }),
    encoding: 'utf8',
    maxBuffer: 16 * 1024 * 1024,
  });
  if (result.status !== 0) throw new Error(`platform ${args[0]} failed:\n${result.stderr}`);
  return JSON.parse(result.stdout.slice(result.stdout.indexOf('{')));
}

async function waitReady(base) {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (server.exitCode !== null) throw new Error(`server exited (code ${server.exitCode})`);
    try {
      if ((await fetch(`${base}/health/ready`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error('server not ready within 60 s');
}

/** Resident set size of a process in MiB, from /proc/<pid>/status (VmRSS is in kB). */
function rssMiB(pid) {
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!match) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(match[1]) / 1024;
}

/**
 * RSS split as the kernel counts it: the heap and native allocations (anonymous), mapped files
 * (SQLite's memory-mapped database pages, code) and shared memory (the WAL index).
 */
function rssParts(pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const parts = {};
  for (const key of ['RssAnon', 'RssFile', 'RssShmem']) {
    const match = new RegExp(`^${key}:\\s+(\\d+) kB$`, 'm').exec(status);
    if (match) parts[key] = Math.round(Number(match[1]) / 1024);
  }
  return parts;
}

/** The mix: two list pages, a retrieve, a create, a 404 and an unauthenticated 401. */
function mix(token, studentId) {
  const auth = { authorization: `Bearer ${token}` };
  const expected = new Map();
  const request = (name, status, r) => {
    expected.set(name, status);
    return { ...r, headers: { ...r.headers, 'x-mix': name } };
  };
  return {
    expected,
    requests: [
      request('list page 1', 200, {
        method: 'GET',
        path: '/v1/students?per_page=25&page=1',
        headers: auth,
      }),
      request('list page 40', 200, {
        method: 'GET',
        path: '/v1/students?per_page=25&page=40',
        headers: auth,
      }),
      request('retrieve', 200, { method: 'GET', path: `/v1/students/${studentId}`, headers: auth }),
      request('create', 201, {
        method: 'POST',
        path: '/v1/students',
        headers: { ...auth, 'content-type': 'application/json' },
        // A unique student number per request (they are unique per organization).
        setupRequest: (req) => ({
          ...req,
          body: JSON.stringify({
            student_number: `MEM-${process.pid}-${++created}`,
            first_name: 'Memory',
            last_name: 'Bench',
          }),
        }),
      }),
      request('not found', 404, {
        method: 'GET',
        path: '/v1/students/stu_01JC0DEM0RG0000000000000ZZ',
        headers: auth,
      }),
      request('unauthenticated', 401, { method: 'GET', path: '/v1/students?per_page=25' }),
    ],
  };
}

/** Sends `amount` requests of the mix; returns the status counts and fails on any surprise. */
async function load(base, amount, token, studentId) {
  const { requests, expected } = mix(token, studentId);
  const statuses = {};
  const unexpected = {};
  const instance = autocannon({
    url: base,
    connections: config.connections,
    amount,
    timeout: 30,
    requests: requests.map((r) => ({
      ...r,
      onResponse: (status) => {
        const name = r.headers['x-mix'];
        statuses[`${name} ${status}`] = (statuses[`${name} ${status}`] ?? 0) + 1;
        if (status !== expected.get(name)) unexpected[`${name} ${status}`] = true;
      },
    })),
  });
  const result = await instance;
  if (result.errors || result.timeouts || Object.keys(unexpected).length) {
    throw new Error(
      `unexpected responses: errors ${result.errors}, timeouts ${result.timeouts}, ${Object.keys(unexpected).join(', ')}`,
    );
  }
  return { statuses, rps: result.requests.average, durationS: result.duration };
}

/** Asks the server's heap probe (profiling/heap-probe.js) something over IPC. */
function probe(message) {
  return new Promise((resolve, reject) => {
    const onMessage = (reply) => {
      if (reply?.type !== message.type && reply?.type !== 'heap:error') return;
      server.off('message', onMessage);
      if (reply.type === 'heap:error') reject(new Error(reply.message));
      else resolve(reply);
    };
    server.on('message', onMessage);
    server.send(message);
  });
}

/**
 * The heap before and after a full collection (BENCH_HEAP=1), and a snapshot of it
 * (BENCH_HEAP_SNAPSHOTS=1): whether what RSS holds is live or garbage V8 has not collected yet.
 */
async function heapEvidence(label) {
  const { stats } = await probe({ type: 'heap:stats' });
  const m = stats.memory;
  const mb = (b) => (b / 1048576).toFixed(1);
  const u = stats.beforeGc;
  log(
    `  before a full GC (${label}): RSS ${u.rss} MiB, V8 heap ${u.heapTotal} MiB ` +
      `(used ${u.heapUsed}; new space ${u.newSpace}, old space ${u.oldSpace}), external ${u.external}`,
  );
  log(
    `  after a full GC (${label}): heap used ${mb(m.heapUsed)} MiB of ${mb(m.heapTotal)}, ` +
      `external ${mb(m.external)}, array buffers ${mb(m.arrayBuffers)}, RSS ${mb(m.rss)} MiB`,
  );
  const evidence = { label, beforeGc: u, afterGc: m, spaces: stats.spaces };
  if (config.heapSnapshots) {
    const file = path.join(path.dirname(RESULTS_FILE), `memory-${label}.heapsnapshot`);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    await probe({ type: 'heap:snapshot', file });
    log(`  heap snapshot: ${path.relative(REPO_ROOT, file)}`);
    evidence.snapshot = file;
  }
  return evidence;
}

/** Clock ticks per second of /proc/<pid>/stat times (sysconf CLK_TCK; 100 on Linux in practice). */
const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout) || 100;

/** CPU seconds (user + system) a process has used, from /proc/<pid>/stat. */
function cpuSeconds(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

/** RSS after a short pause, so what is measured is what the server keeps, not a request in flight. */
async function settledRss(pid) {
  await new Promise((r) => setTimeout(r, 2000));
  return rssMiB(pid);
}

/** The server on the seeded database; with BENCH_HEAP, with the heap probe and its IPC channel. */
function startServer(databasePath, port) {
  const nodeArgs = [...config.serverNodeOptions, ...(config.heap ? ['--require', HEAP_PROBE] : [])];
  return spawn(process.execPath, [...nodeArgs, SERVER_MAIN], {
    cwd: REPO_ROOT,
    env: childEnv({
      DATABASE_URL: `sqlite:${databasePath}`,
      HOST: '127.0.0.1',
      PORT: String(port),
      // The 401s of the mix must stay 401s, not the anonymous budget's 429s.
      RATE_LIMIT_ANONYMOUS: '1000000',
    }),
    stdio: config.heap ? ['ignore', 'ignore', 'inherit', 'ipc'] : ['ignore', 'ignore', 'inherit'],
  });
}

/** The results, for the terminal: throughput, CPU, the RSS trace and its parts, the verdict. */
function printResults({
  measured,
  cpuMsPerRequest,
  before,
  after,
  partsBefore,
  partsAfter,
  trace,
  partsTrace,
  heapTrace,
  growth,
  met,
}) {
  log('\nResults');
  log(`  responses: ${JSON.stringify(measured.statuses)}`);
  log(`  throughput: ${Math.round(measured.rps)} req/s over ${measured.durationS.toFixed(0)} s`);
  log(`  server CPU: ${cpuMsPerRequest.toFixed(2)} ms per request (user + system)`);
  if (config.serverNodeOptions.length) log(`  server flags: ${config.serverNodeOptions.join(' ')}`);
  log(`  RSS after warm-up          ${before.toFixed(1)} MiB`);
  log(`  RSS after ${config.requests} requests ${after.toFixed(1)} MiB`);
  log(`  of which (MiB), warm-up   ${JSON.stringify(partsBefore)}`);
  log(`  of which (MiB), after     ${JSON.stringify(partsAfter)}`);
  log(`  RSS every 10 s (MiB)      ${trace.join(' ')}`);
  log(`    of which anonymous      ${partsTrace.map((p) => p.RssAnon).join(' ')}`);
  log(`    of which mapped files   ${partsTrace.map((p) => p.RssFile).join(' ')}`);
  if (config.heap) {
    log(`  V8 heap every 10 s (MiB)  ${heapTrace.map((u) => u.heapTotal).join(' ')}`);
    log(`    of which new space      ${heapTrace.map((u) => u.newSpace).join(' ')}`);
    log(`    of which old space      ${heapTrace.map((u) => u.oldSpace).join(' ')}`);
  }
  log(
    `  growth                     ${(growth * 100).toFixed(1)} %   goal <= 10 %   ${met ? 'met' : 'MISSED'}`,
  );
  if (config.heap) {
    log(
      '  (BENCH_HEAP: the full GC, and a snapshot more so, change RSS after them; compare the heaps)',
    );
  }
}

/** The results file: the same figures, with the config and, with BENCH_HEAP, the heap evidence. */
function writeMemoryResults({
  measured,
  cpuMsPerRequest,
  before,
  after,
  partsBefore,
  partsAfter,
  trace,
  partsTrace,
  heapTrace,
  growth,
  met,
  heap,
}) {
  fs.mkdirSync(path.dirname(RESULTS_FILE), { recursive: true });
  fs.writeFileSync(
    RESULTS_FILE,
    JSON.stringify(
      {
        benchmark: 'memory',
        generated_at: new Date().toISOString(),
        config,
        node: process.version,
        rss_mib: {
          after_warmup: before,
          after_load: after,
          every_10_s: trace,
          parts_after_warmup: partsBefore,
          parts_after_load: partsAfter,
          parts_every_10_s: partsTrace,
        },
        heap_every_10_s_mib: heapTrace,
        growth,
        goal_max_growth: GOAL_MAX_GROWTH,
        met,
        responses: measured.statuses,
        rps: measured.rps,
        cpu_ms_per_request: cpuMsPerRequest,
        server_node_options: config.serverNodeOptions,
        heap,
      },
      null,
      2,
    ),
  );
}

async function main() {
  if (!fs.existsSync(SERVER_MAIN))
    throw new Error('build the server first (pnpm --filter @platform/server build)');
  tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'platform-memory-bench-'));
  const databasePath = path.join(tmpDir, 'bench.sqlite');
  log(`Seeding ${STUDENTS} students into ${databasePath}…`);
  const seeded = cli(databasePath, [
    'seed',
    '--students',
    String(STUDENTS),
    '--rate-limit',
    '1000000',
  ]);
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  server = startServer(databasePath, port);
  await waitReady(base);
  const page = await fetch(`${base}/v1/students?per_page=1`, {
    headers: { authorization: `Bearer ${seeded.token}` },
  }).then((r) => r.json());
  const studentId = page.data[0].id;

  log(`Warm-up: ${config.warmupRequests} requests of the mix…`);
  await load(base, config.warmupRequests, seeded.token, studentId);
  const before = await settledRss(server.pid);
  const partsBefore = rssParts(server.pid);
  log(`RSS after warm-up: ${before.toFixed(1)} MiB ${JSON.stringify(partsBefore)}`);
  const heap = [];
  if (config.heap) heap.push(await heapEvidence('warmup'));

  log(`Load: ${config.requests} requests of the mix, ${config.connections} connections…`);
  // RSS every 10 s during the load: a plateau is a warm heap, a steady climb is a leak.
  const trace = [];
  const partsTrace = [];
  const heapTrace = [];
  const cpuBefore = cpuSeconds(server.pid);
  const sampler = setInterval(() => {
    trace.push(Math.round(rssMiB(server.pid)));
    partsTrace.push(rssParts(server.pid));
    if (config.heap)
      probe({ type: 'heap:usage' }).then(
        (r) => heapTrace.push(r.usage),
        () => {},
      );
  }, 10_000);
  const measured = await load(base, config.requests, seeded.token, studentId).finally(() =>
    clearInterval(sampler),
  );
  const cpuMsPerRequest = ((cpuSeconds(server.pid) - cpuBefore) * 1000) / config.requests;
  const after = await settledRss(server.pid);
  const partsAfter = rssParts(server.pid);
  if (config.heap) heap.push(await heapEvidence('load'));
  const growth = after / before - 1;
  const met = growth <= GOAL_MAX_GROWTH;

  const results = {
    measured,
    cpuMsPerRequest,
    before,
    after,
    partsBefore,
    partsAfter,
    trace,
    partsTrace,
    heapTrace,
    growth,
    met,
    heap,
  };
  printResults(results);
  writeMemoryResults(results);
  return met || !config.enforceGoals ? 0 : 1;
}

function cleanup() {
  if (server && server.exitCode === null) server.kill('SIGTERM');
  if (tmpDir) fs.rmSync(tmpDir, { recursive: true, force: true });
}

main().then(
  (code) => {
    cleanup();
    process.exitCode = code;
  },
  (error) => {
    console.error(`BENCHMARK FAILED: ${error.message}`);
    cleanup();
    process.exitCode = 2;
  },
);
process.on('SIGINT', () => {
  cleanup();
  process.exit(130);
});
