'use strict';
/**
 * What callers without a valid credential cost the server once they are over their per-IP
 * budget, and what they do to a paying tenant. Spawns the built server on loopback, seeds a
 * school, and measures in the same run:
 *
 * 1. CPU per over-budget request (server process, /proc/<pid>/stat, idle CPU subtracted), for
 *    1 MiB bodies sent with no token, a forged personal token, a forged OAuth token, and to the
 *    OAuth token endpoint. Goal: under 1 ms each.
 * 2. A tenant's list latency (one connection, sequential GET /v1/students) alone, then while
 *    BENCH_LOOPS anonymous loops send 1 MiB bodies as fast as they are answered. Goal: p99
 *    under load at most 2× the p99 alone.
 *
 *   pnpm --filter @platform/server build && node bench/anonymous-cost.bench.js
 *
 * Knobs: BENCH_REQUESTS (per CPU case, default 1000), BENCH_WARMUP_REQUESTS (per case before
 * measuring, default 500), BENCH_DURATION (s per latency case, default 10), BENCH_LOOPS
 * (default 4), BENCH_BODY_BYTES (default 1048576),
 * BENCH_ENFORCE_GOALS=1 (exit 1 when a goal is missed). Loopback only; every loop is bounded.
 */
// Loopback only: this run and every process it starts refuse any other address (tooling/hermetic).
require('@platform/hermetic').enforceForRun();
const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const http = require('node:http');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { configFromEnv, envNumber, serverNodeFlags } = require('./lib/harness');

const REPO_ROOT = path.resolve(__dirname, '..');
const SERVER_MAIN = path.join(REPO_ROOT, 'apps', 'server', 'dist', 'main.js');
const CLI_MAIN = path.join(REPO_ROOT, 'apps', 'server', 'dist', 'cli', 'main.js');
const BARE_MAIN = path.join(__dirname, 'bare-refusal-server.js');
const RESULTS_FILE = path.join(__dirname, 'results', 'anonymous-cost.json');

const config = configFromEnv(() => ({
  requests: envNumber('BENCH_REQUESTS', 1000, { integer: true }),
  durationSec: envNumber('BENCH_DURATION', 10),
  loops: envNumber('BENCH_LOOPS', 4, { integer: true }),
  warmupRequests: envNumber('BENCH_WARMUP_REQUESTS', 500, { integer: true }),
  bodyBytes: envNumber('BENCH_BODY_BYTES', 1024 * 1024, { integer: true }),
  enforceGoals: process.env.BENCH_ENFORCE_GOALS === '1',
}));
const GOALS = { cpuMsPerRefusal: 1, p99Ratio: 2 };
const STUDENTS = 2000;

const log = (message = '') => process.stdout.write(`${message}\n`);

const children = [];
let tmpDir;

function cleanup() {
  for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
  if (tmpDir) fs.rmSync(tmpDir, { recursive: true, force: true });
}
process.on('exit', cleanup);
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(130));

/** The server's own settings are never inherited from this process's environment. */
function childEnv(extra) {
  const env = { ...process.env };
  for (const key of Object.keys(env)) {
    if (/^(DATABASE_|REDIS_|WEBHOOK_|RATE_LIMIT_|PORT$|HOST$|LOG_LEVEL$|DEV_|METRICS_)/.test(key))
      delete env[key];
  }
  return { ...env, ...extra };
}

function cli(databasePath, ...args) {
  const result = spawnSync(process.execPath, [CLI_MAIN, ...args, '--json'], {
    cwd: REPO_ROOT,
    env: childEnv({ DATABASE_URL: `sqlite:${databasePath}`, NODE_ENV: 'production' }),
    encoding: 'utf8',
    maxBuffer: 16 * 1024 * 1024,
  });
  if (result.status !== 0) throw new Error(`cli ${args[0]} failed: ${result.stderr}`);
  return JSON.parse(result.stdout.slice(result.stdout.indexOf('{')));
}

function freePort() {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.on('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

/** CPU seconds (user + system) the server has used so far. */
const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout) || 100;
function cpuSeconds(pid, which = 'both') {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const user = Number(fields[11]) / CLOCK_TICKS;
  const system = Number(fields[12]) / CLOCK_TICKS;
  return which === 'user' ? user : which === 'system' ? system : user + system;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * One request over its own connection, body and all, as an abusive client sends it. The server
 * may answer and close before the body is through: a status seen counts as answered, a reset
 * before any status as `reset` (the server refused to read on; nothing was processed).
 */
function raw(port, { method = 'POST', path: target, headers = {}, body }) {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    let received = '';
    let status = null;
    const done = (outcome) => {
      socket.destroy();
      resolve(outcome);
    };
    socket.setTimeout(10_000, () => done({ status, outcome: 'timeout' }));
    socket.on('data', (chunk) => {
      if (status !== null) return;
      received += chunk.toString('latin1');
      const match = /^HTTP\/1\.1 (\d{3})/.exec(received);
      if (match) {
        status = Number(match[1]);
        done({ status, outcome: 'answered' });
      }
    });
    socket.on('error', () => done({ status, outcome: status === null ? 'reset' : 'answered' }));
    socket.on('close', () => done({ status, outcome: status === null ? 'reset' : 'answered' }));
    const head = [
      `${method} ${target} HTTP/1.1`,
      'Host: 127.0.0.1',
      ...Object.entries({ ...headers, 'Content-Length': body ? body.length : 0 }).map(
        ([k, v]) => `${k}: ${v}`,
      ),
      '',
      '',
    ].join('\r\n');
    socket.write(head);
    if (body) socket.write(body);
  });
}

/** `count` requests spread over `loops` concurrent loops; tallies statuses and resets. */
async function burst(port, count, request) {
  const tally = {};
  let next = 0;
  const loop = async () => {
    while (next < count) {
      next += 1;
      const { status, outcome } = await raw(port, request);
      const key = outcome === 'answered' ? String(status) : outcome;
      tally[key] = (tally[key] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: config.loops }, loop));
  return tally;
}

/** Bytes the server has read through read(2)-like calls, sockets included (/proc/<pid>/io). */
function bytesRead(pid) {
  const io = fs.readFileSync(`/proc/${pid}/io`, 'utf8');
  return Number(/^rchar: (\d+)/m.exec(io)[1]);
}

/** CPU (all, and user only) and bytes read by process `pid` per request of a burst. */
async function measureCpu(pid, port, count, request, idleCpuPerSec) {
  const started = process.hrtime.bigint();
  const before = cpuSeconds(pid);
  const userBefore = cpuSeconds(pid, 'user');
  const readBefore = bytesRead(pid);
  const tally = await burst(port, count, request);
  await sleep(200); // let the last sockets close on the server's side
  const elapsed = Number(process.hrtime.bigint() - started) / 1e9;
  return {
    tally,
    cpu_ms: Math.max(0, (cpuSeconds(pid) - before - idleCpuPerSec * elapsed) * 1000) / count,
    user_cpu_ms: ((cpuSeconds(pid, 'user') - userBefore) * 1000) / count,
    kib_read: (bytesRead(pid) - readBefore) / count / 1024,
  };
}

async function idleCpuPerSecond(pid) {
  const before = cpuSeconds(pid);
  await sleep(2000);
  return (cpuSeconds(pid) - before) / 2;
}

/** Sequential list requests on one keep-alive connection for `seconds`; latencies in ms. */
async function tenantLatencies(port, token, seconds) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const latencies = [];
  const statuses = {};
  const deadline = Date.now() + seconds * 1000;
  while (Date.now() < deadline) {
    const started = process.hrtime.bigint();
    const status = await new Promise((resolve, reject) => {
      const req = http.get(
        {
          host: '127.0.0.1',
          port,
          path: '/v1/students?per_page=25&page=3',
          agent,
          headers: { Authorization: `Bearer ${token}` },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode));
        },
      );
      req.on('error', reject);
    });
    latencies.push(Number(process.hrtime.bigint() - started) / 1e6);
    statuses[status] = (statuses[status] ?? 0) + 1;
  }
  agent.destroy();
  const sorted = Float64Array.from(latencies).sort();
  const at = (p) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
  return { requests: latencies.length, statuses, p50_ms: at(50), p99_ms: at(99) };
}

/** Anonymous loops sending 1 MiB bodies until `stop` resolves; counts what they got. */
function anonymousLoad(port, request, stop) {
  const tally = {};
  let stopped = false;
  stop.then(() => (stopped = true));
  const loop = async () => {
    while (!stopped) {
      const { status, outcome } = await raw(port, request);
      const key = outcome === 'answered' ? String(status) : outcome;
      tally[key] = (tally[key] ?? 0) + 1;
    }
  };
  return Promise.all(Array.from({ length: config.loops }, loop)).then(() => tally);
}

/** Starts a child node process and waits until `ready()` resolves true. */
async function startChild(args, env, ready) {
  // With the heap flags `pnpm start` gives the server, the baseline too.
  const child = spawn(process.execPath, [...serverNodeFlags(), ...args], {
    cwd: REPO_ROOT,
    env: childEnv(env),
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  children.push(child);
  for (let i = 0; !(await ready()); i++) {
    if (child.exitCode !== null) throw new Error(`${args[0]} exited before it was ready`);
    if (i > 300) throw new Error(`${args[0]} was not ready within 30 s`);
    await sleep(100);
  }
  return child;
}

async function answers(url) {
  try {
    const res = await fetch(url);
    await res.arrayBuffer();
    return res.status > 0;
  } catch {
    return false;
  }
}

/** The over-budget requests measured: forged or missing credentials, with and without a 1 MiB body. */
function refusalCases() {
  const body = Buffer.alloc(config.bodyBytes, 0x20);
  body[0] = 0x7b; // '{'
  body[body.length - 1] = 0x7d; // '}'
  const form = Buffer.alloc(config.bodyBytes, 0x61); // one huge form field name
  const json = { 'Content-Type': 'application/json' };
  const cases = [
    ['no token, 1 MiB JSON body', { path: '/v1/students', headers: json, body }],
    [
      'forged personal token, 1 MiB body',
      {
        path: '/v1/students',
        headers: { ...json, Authorization: `Bearer pat_${'x'.repeat(36)}` },
        body,
      },
    ],
    [
      'forged OAuth token, 1 MiB body',
      {
        path: '/v1/students',
        headers: { ...json, Authorization: `Bearer ${'x'.repeat(43)}` },
        body,
      },
    ],
    [
      'POST /oauth/token, wrong client, 1 MiB form',
      {
        path: '/oauth/token',
        headers: {
          'Content-Type': 'application/x-www-form-urlencoded',
          Authorization: `Basic ${Buffer.from('oac_01JC0DEM0RG000000000000000:wrong').toString('base64')}`,
        },
        body: form,
      },
    ],
    ['no token, no body', { method: 'GET', path: '/v1/students' }],
  ];
  return cases;
}

/** The server on the seeded database (no webhook dispatcher) and the bare node:http baseline. */
async function startServers(databasePath, port, barePort) {
  const server = await startChild(
    [SERVER_MAIN],
    {
      DATABASE_URL: `sqlite:${databasePath}`,
      HOST: '127.0.0.1',
      PORT: String(port),
      LOG_LEVEL: 'warn',
      NODE_ENV: 'production',
      WEBHOOK_DISPATCHER: 'false',
    },
    () => answers(`http://127.0.0.1:${port}/health/ready`),
  );
  const bare = await startChild([BARE_MAIN], { PORT: String(barePort) }, () =>
    answers(`http://127.0.0.1:${barePort}/`),
  );
  return { server, bare };
}

/** The CPU table and the tenant's latencies, with whether each goal is met. */
function printResults({ cpu, alone, underLoad, loadTally, ratio }) {
  log();
  log(
    'CPU per over-budget request (user + system, idle subtracted; bare = node:http answering the same 429)',
  );
  log(
    `  ${'case'.padEnd(44)} ${'server ms'.padStart(9)} ${'bare ms'.padStart(8)} ${'server KiB read'.padStart(15)}  goal        answers`,
  );
  for (const c of cpu) {
    const met = c.server.cpu_ms < GOALS.cpuMsPerRefusal;
    log(
      `  ${c.name.padEnd(44)} ${c.server.cpu_ms.toFixed(3).padStart(9)} ${c.bare.cpu_ms.toFixed(3).padStart(8)} ${c.server.kib_read.toFixed(0).padStart(15)}  < ${GOALS.cpuMsPerRefusal} ms ${met ? 'met   ' : 'MISSED'} ${JSON.stringify(c.server.tally)}`,
    );
  }
  log();
  log(
    `Tenant list latency (GET /v1/students?per_page=25&page=3, one connection, ${config.durationSec} s each)`,
  );
  log(
    `  alone                          p50 ${alone.p50_ms.toFixed(2)} ms  p99 ${alone.p99_ms.toFixed(2)} ms  (${alone.requests} requests)`,
  );
  log(
    `  with ${config.loops} anonymous 1 MiB loops    p50 ${underLoad.p50_ms.toFixed(2)} ms  p99 ${underLoad.p99_ms.toFixed(2)} ms  (${underLoad.requests} requests; the loops got ${JSON.stringify(loadTally)})`,
  );
  log(
    `  p99 with / alone               ${ratio.toFixed(2)}   goal <= ${GOALS.p99Ratio}  ${ratio <= GOALS.p99Ratio ? 'met' : 'MISSED'}`,
  );
}

async function main() {
  if (!fs.existsSync(SERVER_MAIN)) {
    throw new Error('build the server first: pnpm --filter @platform/server build');
  }
  tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'platform-anon-bench-'));
  const databasePath = path.join(tmpDir, 'bench.sqlite');
  log(
    `Anonymous cost benchmark: ${config.requests} requests per case over ${config.loops} loops, ` +
      `${config.bodyBytes} B bodies; Node ${process.version}, ${os.cpus().length} CPUs, load average ${os.loadavg()[0].toFixed(1)}`,
  );
  const seeded = cli(
    databasePath,
    'seed',
    '--students',
    String(STUDENTS),
    '--rate-limit',
    '1000000',
  );
  const [port, barePort] = [await freePort(), await freePort()];
  const { server, bare } = await startServers(databasePath, port, barePort);

  // Warm the JIT on the tenant's path, then spend this address's anonymous and OAuth budgets.
  await tenantLatencies(port, seeded.token, 3);
  await burst(port, 100, { method: 'GET', path: '/v1/students' });
  await burst(port, 320, { path: '/oauth/token', headers: { 'Content-Type': 'text/plain' } });
  await burst(barePort, 420, { method: 'GET', path: '/v1/students' });

  const cases = refusalCases();
  // The refusal paths need a few thousand requests before V8 has optimised them.
  for (const [, request] of cases) {
    await burst(port, config.warmupRequests, request);
    await burst(barePort, config.warmupRequests, request);
  }
  const [serverIdle, bareIdle] = [
    await idleCpuPerSecond(server.pid),
    await idleCpuPerSecond(bare.pid),
  ];
  const cpu = [];
  for (const [name, request] of cases) {
    process.stdout.write(`  ${name}… `);
    // Interleaved, so a change in the machine's load hits both alike.
    const measured = await measureCpu(server.pid, port, config.requests, request, serverIdle);
    const baseline = await measureCpu(bare.pid, barePort, config.requests, request, bareIdle);
    cpu.push({ name, server: measured, bare: baseline });
    log('done');
  }

  const alone = await tenantLatencies(port, seeded.token, config.durationSec);
  let stop;
  const stopped = new Promise((resolve) => (stop = resolve));
  const load = anonymousLoad(port, cases[0][1], stopped);
  const underLoad = await tenantLatencies(port, seeded.token, config.durationSec);
  stop();
  const loadTally = await load;
  const ratio = underLoad.p99_ms / alone.p99_ms;

  printResults({ cpu, alone, underLoad, loadTally, ratio });

  const missed =
    cpu.some((c) => c.server.cpu_ms >= GOALS.cpuMsPerRefusal) || ratio > GOALS.p99Ratio;
  const bad = [alone, underLoad].some((r) => Object.keys(r.statuses).some((s) => s !== '200'));
  fs.mkdirSync(path.dirname(RESULTS_FILE), { recursive: true });
  fs.writeFileSync(
    RESULTS_FILE,
    `${JSON.stringify({ config, load_average: os.loadavg(), cpu, alone, under_load: underLoad, load: loadTally, p99_ratio: ratio }, null, 2)}\n`,
  );
  log();
  log(`Results written to ${path.relative(REPO_ROOT, RESULTS_FILE)}`);
  if (bad) {
    log('FAILED: the tenant got non-200 answers; the figures are not trustworthy.');
    return 1;
  }
  if (missed) log('Goals missed (see above).');
  return missed && config.enforceGoals ? 1 : 0;
}

main().then(
  (code) => {
    cleanup();
    process.exit(code);
  },
  (error) => {
    log(`BENCHMARK FAILED: ${error.message}`);
    cleanup();
    process.exit(1);
  },
);
