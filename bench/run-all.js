'use strict';
/**
 * `pnpm bench`: every benchmark, on SQLite and on PostgreSQL, then one table of issue 17's goals
 * (lib/goals.js) read from what this run wrote to bench/results/.
 *
 * PostgreSQL: BENCH_POSTGRES_URL if set, else a throwaway server of its own
 * (scripts/throwaway-postgres.sh, in a temporary directory on a free port), stopped at the end,
 * also on failure or Ctrl-C. scale-out.bench.js starts its own PostgreSQL and Redis, as before.
 *
 * BENCH_ONLY=<step>,<step> runs only those steps (names below); an unknown name stops the run
 * before it starts (exit 2). A failed benchmark does not stop the others: the run ends with exit 1
 * and its goals show as not measured. Every other BENCH_* variable reaches each benchmark as it
 * is: see README.md for what each one reads.
 */
// Loopback only: this run and every process it starts refuse any other address (tooling/hermetic).
require('@platform/hermetic').enforceForRun();
const { execFileSync, spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { REPO_ROOT, freePort } = require('./lib/harness');
const { goalRows, goalTable, resultsReader } = require('./lib/goals');

const RESULTS_DIR = path.join(__dirname, 'results');

/**
 * The steps in order. `postgres`: the step gets BENCH_POSTGRES_URL (the server is started for the
 * first such step). `results`: the files of bench/results/ the goals table reads from the step.
 */
const STEPS = [
  { name: 'students-list', script: 'students-list.bench.js', results: ['students-list.json'] },
  {
    name: 'students-list-postgres',
    script: 'students-list.bench.js',
    env: { BENCH_DATABASE: 'postgres' },
    postgres: true,
    results: ['students-list-postgres.json'],
  },
  {
    name: 'collection-size',
    script: 'collection-size.bench.js',
    postgres: true,
    results: ['collection-size.json'],
  },
  { name: 'write-cost', script: 'write-cost.bench.js', postgres: true, results: [] },
  { name: 'delivery', script: 'delivery.bench.js', results: ['delivery.json'] },
  { name: 'scale-out', script: 'scale-out.bench.js', results: ['delivery-bullmq.json'] },
  { name: 'search', script: 'search.bench.js', results: [] },
  { name: 'anonymous-cost', script: 'anonymous-cost.bench.js', results: [] },
  { name: 'memory', script: 'memory.bench.js', results: ['memory.json'] },
];

function selectedSteps() {
  const only = (process.env.BENCH_ONLY ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const unknown = only.filter((name) => !STEPS.some((s) => s.name === name));
  if (unknown.length) {
    console.error(
      `BENCHMARK FAILED: BENCH_ONLY names no step '${unknown.join("', '")}' (steps: ${STEPS.map((s) => s.name).join(', ')})`,
    );
    process.exit(2);
  }
  return only.length ? STEPS.filter((s) => only.includes(s.name)) : STEPS;
}

/** A throwaway PostgreSQL of this run's own, unless BENCH_POSTGRES_URL names one. */
async function postgresServer() {
  if (process.env.BENCH_POSTGRES_URL) return { url: process.env.BENCH_POSTGRES_URL, stop() {} };
  const env = {
    ...process.env,
    PLATFORM_PG_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'platform-bench-pg-')),
    PLATFORM_PG_PORT: String(await freePort()),
  };
  const script = path.join(REPO_ROOT, 'scripts', 'throwaway-postgres.sh');
  const run = (command) =>
    execFileSync(script, [command], {
      env,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    });
  console.log(
    `Starting a throwaway PostgreSQL for the PostgreSQL runs (port ${env.PLATFORM_PG_PORT}) ...`,
  );
  const url = run('start').trim();
  return { url, stop: () => run('stop') };
}

/** Runs one benchmark as a child process, its output shown as it comes; resolves to its exit code. */
function runStep(step, extraEnv) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(__dirname, step.script)], {
      env: { ...process.env, ...step.env, ...extraEnv },
      stdio: 'inherit',
    });
    child.on('exit', (code, signal) => resolve(signal ? 128 : (code ?? 1)));
  });
}

async function main() {
  const steps = selectedSteps();
  const startedMs = Date.now();
  let postgres;
  const stopPostgres = () => {
    const server = postgres;
    postgres = undefined;
    server?.stop();
  };
  process.on('SIGINT', () => {
    // The benchmark in progress got the same Ctrl-C and cleans up after itself.
    stopPostgres();
    process.exit(130);
  });

  const failed = [];
  try {
    for (const step of steps) {
      let extraEnv = {};
      if (step.postgres) {
        postgres ??= await postgresServer();
        extraEnv = { BENCH_POSTGRES_URL: postgres.url };
      } else {
        stopPostgres(); // the steps that need it come first: it does not share the cores after
      }
      console.log(`\n=== ${step.name} (bench/${step.script})\n`);
      const code = await runStep(step, extraEnv);
      if (code !== 0) failed.push({ ...step, code });
    }
  } finally {
    stopPostgres();
  }

  console.log(
    `\n=== Issue 17 goals, this run (${steps.length} of ${STEPS.length} steps; details above and in bench/results/)\n`,
  );
  const untrusted = failed.flatMap((step) => step.results);
  console.log(goalTable(goalRows(resultsReader(RESULTS_DIR, startedMs, untrusted))));
  if (failed.length) {
    console.log(
      `\nBENCHMARK FAILED: ${failed.map((s) => `${s.name} (exit ${s.code})`).join(', ')}`,
    );
    process.exitCode = 1;
  }
}

main().catch((error) => {
  console.error(`BENCHMARK FAILED: ${error.message}`);
  process.exit(1);
});
