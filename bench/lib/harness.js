'use strict';
/**
 * What the benchmarks that drive the real server share: the operator CLI (to migrate and make
 * organizations and tokens), a free loopback port, waiting for readiness, and sequential latency.
 */
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');

const REPO_ROOT = path.resolve(__dirname, '..', '..');
const SERVER_MAIN = path.join(REPO_ROOT, 'apps', 'server', 'dist', 'main.js');
const CLI_MAIN = path.join(REPO_ROOT, 'apps', 'server', 'dist', 'cli', 'main.js');

/** Runs one CLI command with `--json` against `databaseUrl` and returns its parsed output. */
function cli(databaseUrl, args) {
  const result = spawnSync(process.execPath, [CLI_MAIN, ...args, '--json'], {
    cwd: REPO_ROOT,
    env: { ...process.env, DATABASE_URL: databaseUrl, NODE_ENV: 'production', LOG_LEVEL: 'warn' },
    encoding: 'utf8',
    maxBuffer: 16 * 1024 * 1024,
  });
  if (result.status !== 0)
    throw new Error(`cli ${args[0]} failed: ${result.stdout}\n${result.stderr}`);
  return JSON.parse(result.stdout.slice(result.stdout.indexOf('{')));
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

async function waitReady(base) {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    try {
      if ((await fetch(`${base}/health/ready`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('the server was not ready within 60 s');
}

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

function summarize(latencies) {
  const sorted = [...latencies].sort((a, b) => a - b);
  return {
    n: sorted.length,
    p50_ms: percentile(sorted, 50),
    p99_ms: percentile(sorted, 99),
    max_ms: sorted.at(-1),
  };
}

/**
 * Sequential requests, one at a time: each one's latency (ms, in order), the count of each
 * status, and the first body.
 */
async function requests(url, token, count) {
  const latencies = [];
  const statuses = {};
  let firstBody;
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
    const text = await res.text();
    latencies.push(performance.now() - started);
    statuses[res.status] = (statuses[res.status] ?? 0) + 1;
    firstBody ??= text;
  }
  return { latencies, statuses, firstBody };
}

/** Sequential requests, one at a time: the latency a caller sees on an otherwise idle server. */
async function sequential(url, token, count) {
  const { latencies, statuses, firstBody } = await requests(url, token, count);
  return { ...summarize(latencies), statuses, firstBody };
}

/**
 * Writes a run's results as JSON, stamped with what makes runs comparable (the commit, Node, the
 * machine), and returns the path relative to the repository for the closing log line.
 */
function writeResults(file, benchmark, results) {
  const git = spawnSync('git', ['rev-parse', 'HEAD'], { cwd: REPO_ROOT, encoding: 'utf8' });
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const stamped = {
    benchmark,
    generated_at: new Date().toISOString(),
    commit: git.stdout.trim() || null,
    node: process.version,
    cpus: os.cpus().length,
    loadavg: os.loadavg(),
    ...results,
  };
  fs.writeFileSync(file, `${JSON.stringify(stamped, null, 2)}\n`);
  return path.relative(REPO_ROOT, file);
}

/**
 * The Node flags each benchmark runs the server (and the baseline beside it) with: those of
 * apps/server's production `start` script (the flags between `node` and `dist/main.js`), unless
 * BENCH_SERVER_NODE_OPTIONS replaces them (empty for Node's defaults).
 */
function serverNodeFlags() {
  const override = process.env.BENCH_SERVER_NODE_OPTIONS;
  if (override !== undefined) return override.split(/\s+/).filter(Boolean);
  const { start } = require('../../apps/server/package.json').scripts;
  const match = /^(?:exec\s+)?node((?:\s+--\S+)*)\s+dist\/main\.js$/.exec(start);
  if (!match)
    throw new Error(
      `apps/server's start script is not "[exec] node [--flags] dist/main.js": ${start}`,
    );
  return match[1].trim().split(/\s+/).filter(Boolean);
}

/** A benchmark setting the environment got wrong: the run stops before it starts. */
class BenchConfigError extends Error {}

/**
 * A numeric setting from the environment, parsed the same way by every benchmark: unset or empty
 * gives `fallback`; anything else must be a finite number of at least `min` (an integer with
 * `integer`), or it is a BenchConfigError naming the variable and what it got.
 */
function envNumber(name, fallback, { min = 1, integer = false } = {}) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min || (integer && !Number.isInteger(n))) {
    throw new BenchConfigError(
      `${name} must be ${integer ? 'an integer' : 'a number'} >= ${min} (got '${raw}')`,
    );
  }
  return n;
}

/** The settings `read` builds from the environment; a BenchConfigError ends the run (exit 2). */
function configFromEnv(read) {
  try {
    return read();
  } catch (error) {
    if (!(error instanceof BenchConfigError)) throw error;
    console.error(`BENCHMARK FAILED: ${error.message}`);
    process.exit(2);
  }
}

module.exports = {
  BenchConfigError,
  envNumber,
  configFromEnv,
  serverNodeFlags,
  REPO_ROOT,
  SERVER_MAIN,
  CLI_MAIN,
  cli,
  freePort,
  waitReady,
  percentile,
  summarize,
  requests,
  sequential,
  writeResults,
};
