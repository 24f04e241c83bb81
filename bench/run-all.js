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
 * and its goals show as not measured. BENCH_ENFORCE_GOALS=1 makes a missed goal in the table
 * exit 1 too. Every other BENCH_* variable reaches each benchmark as it is: see README.md for
 * what each one reads.
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
 * first such step); the others run without it, so they measure SQLite whatever the shell set.
 * `results`: the files of bench/results/ the goals table reads from the step.
 */
const STEPS = [
  {
    name: 'students-list',
    script: 'students-list.bench.js',
    env: { BENCH_DATABASE: 'sqlite' },
    results: ['students-list.json'],
  },
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
  { name: 'write-cost-postgres', script: 'write-cost.bench.js', postgres: true, results: [] },
  { name: 'feed-postgres', script: 'feed.bench.js', postgres: true, results: [] },
  { name: 'feed', script: 'feed.bench.js', results: [] },
  { name: 'write-cost', script: 'write-cost.bench.js', results: [] },
  { name: 'delivery', script: 'delivery.bench.js', results: ['delivery.json'] },
  { name: 'scale-out', script: 'scale-out.bench.js', results: ['delivery-bullmq.json'] },
  { name: 'search', script: 'search.bench.js', results: [] },
  { name: 'anonymous-cost', script: 'anonymous-cost.bench.js', results: [] },
  { name: 'memory', script: 'memory.bench.js', results: ['memory.json'] },
  // Exports (issue 33): each run prints and writes its own goals (export-<database>.json).
  { name: 'export', script: 'export.bench.js', env: { BENCH_DATABASE: 'sqlite' }, results: [] },
  {
    name: 'export-postgres',
    script: 'export.bench.js',
    env: { BENCH_DATABASE: 'postgres' },
    postgres: true,
    results: [],
  },
  { name: 'request-log', script: 'request-log.bench.js', results: ['request-log.json'] },
  // The portal in Chromium (issue 48): first-load transfer and each page's first render.
  { name: 'portal', script: 'portal.bench.js', results: [] },
  // The mirror's loader against a bare loader of the same NDJSON file (issue 44).
  { name: 'sync-mirror', script: 'sync-mirror.bench.js', postgres: true, results: [] },
  // Batch upserts against INSERT … ON CONFLICT in batches (issue 45).
  { name: 'batch-upsert', script: 'batch-upsert.bench.js', results: [] },
  {
    name: 'batch-upsert-postgres',
    script: 'batch-upsert.bench.js',
    postgres: true,
    results: [],
  },
  // A 1,000,000-row full import, its rows/s and the server's memory (issue 45).
  { name: 'import', script: 'import.bench.js', env: { BENCH_DATABASE: 'sqlite' }, results: [] },
  {
    name: 'import-postgres',
    script: 'import.bench.js',
    env: { BENCH_DATABASE: 'postgres' },
    postgres: true,
    results: [],
  },
];

/**
 * What every step's environment starts from. BENCH_ENFORCE_GOALS is the runner's to apply (on
 * the goals table): a benchmark that enforced it itself would exit 1 on a missed goal, and the
 * table would then distrust its figures and show the goal as not measured instead of missed.
 */
function baseEnv() {
  const env = { ...process.env };
  delete env.BENCH_ENFORCE_GOALS;
  delete env.BENCH_POSTGRES_URL;
  return env;
}

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

/**
 * A throwaway PostgreSQL of this run's own, unless BENCH_POSTGRES_URL names one. A start that
 * fails (the port taken between choosing it and PostgreSQL binding it, say) is cleaned up and
 * tried once more on another port; then it throws.
 */
async function postgresServer() {
  if (process.env.BENCH_POSTGRES_URL) return { url: process.env.BENCH_POSTGRES_URL, stop() {} };
  const script = path.join(REPO_ROOT, 'scripts', 'throwaway-postgres.sh');
  for (let attempt = 1; ; attempt += 1) {
    const env = {
      ...process.env,
      PLATFORM_PG_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'platform-bench-pg-')),
      PLATFORM_PG_PORT: String(await freePort()),
    };
    const run = (command) =>
      execFileSync(script, [command], {
        env,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'inherit'],
      });
    const stop = () => {
      try {
        run('stop');
      } catch (error) {
        console.error(`Could not stop the throwaway PostgreSQL: ${error.message}`);
      }
      // `stop` deletes it; a start that failed early (no binaries) may have left it behind.
      fs.rmSync(env.PLATFORM_PG_DIR, { recursive: true, force: true });
    };
    console.log(
      `Starting a throwaway PostgreSQL for the PostgreSQL runs (port ${env.PLATFORM_PG_PORT}) ...`,
    );
    try {
      return { url: run('start').trim(), stop };
    } catch (error) {
      stop();
      if (attempt >= 2) throw new Error(`the throwaway PostgreSQL did not start: ${error.message}`);
    }
  }
}

/** The child running now, and the signal the run was asked to stop with (if any). */
const state = { child: undefined, stopping: undefined };

/**
 * Runs one benchmark as a child process, its output shown as it comes. Resolves to its exit
 * code, or 128 + the signal's number when a signal ended it.
 */
function runStep(step, extraEnv) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(__dirname, step.script)], {
      env: { ...baseEnv(), ...step.env, ...extraEnv },
      stdio: 'inherit',
    });
    state.child = child;
    child.on('exit', (code, signal) => {
      state.child = undefined;
      resolve(signal ? 128 + os.constants.signals[signal] : (code ?? 1));
    });
  });
}

/**
 * Ctrl-C, SIGTERM or SIGHUP: the benchmark under way is let finish its own clean-up (it drops its
 * database, stops its servers); then the run stops PostgreSQL and exits 128 + the signal's number.
 * Ctrl-C reaches the benchmark from the terminal already; the other two are passed on to it.
 */
function onStopSignals() {
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.on(signal, () => {
      state.stopping ??= signal;
      if (signal !== 'SIGINT') state.child?.kill(signal);
    });
  }
}

async function main() {
  const steps = selectedSteps();
  const enforce = process.env.BENCH_ENFORCE_GOALS === '1';
  const startedMs = Date.now();
  onStopSignals();
  let postgres;
  let postgresFailure;
  const stopPostgres = () => {
    const server = postgres;
    postgres = undefined;
    server?.stop();
  };

  const failed = [];
  try {
    for (const step of steps) {
      if (state.stopping) break;
      let extraEnv = {};
      if (step.postgres) {
        if (!postgres && !postgresFailure) {
          try {
            postgres = await postgresServer();
          } catch (error) {
            postgresFailure = error.message;
            console.error(`BENCHMARK FAILED: ${postgresFailure}; the PostgreSQL steps are skipped`);
          }
        }
        if (!postgres) {
          failed.push({ ...step, why: 'PostgreSQL did not start' });
          continue;
        }
        extraEnv = { BENCH_POSTGRES_URL: postgres.url };
      } else {
        stopPostgres(); // the steps that need it come first: it does not share the cores after
      }
      console.log(`\n=== ${step.name} (bench/${step.script})\n`);
      const code = await runStep(step, extraEnv);
      if (code !== 0) failed.push({ ...step, why: `exit ${code}` });
    }
  } finally {
    stopPostgres();
  }
  if (state.stopping) {
    console.error(`\nStopped by ${state.stopping}.`);
    process.exit(128 + os.constants.signals[state.stopping]);
  }

  console.log(
    `\n=== Issue 17 goals, this run (${steps.length} of ${STEPS.length} steps; details above and in bench/results/)\n`,
  );
  const untrusted = failed.flatMap((step) => step.results);
  const rows = goalRows(resultsReader(RESULTS_DIR, startedMs, untrusted));
  console.log(goalTable(rows));
  if (failed.length) {
    console.log(`\nBENCHMARK FAILED: ${failed.map((s) => `${s.name} (${s.why})`).join(', ')}`);
    process.exitCode = 1;
  }
  const missed = rows.filter((r) => r.met === false);
  if (enforce && missed.length) {
    console.log(`\nGoals missed (BENCH_ENFORCE_GOALS=1): ${missed.map((r) => r.goal).join('; ')}`);
    process.exitCode = 1;
  }
}

main().catch((error) => {
  console.error(`BENCHMARK FAILED: ${error.message}`);
  process.exit(1);
});
