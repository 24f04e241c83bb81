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
const fs = require('node:fs');
const path = require('node:path');
const { BenchError } = require('./lib/bench-error');
const { checkSamples } = require('./lib/list-checks');
const {
  REPO_ROOT,
  SERVER_MAIN,
  CLI_MAIN,
  RESULTS_DIR,
  STUDENTS,
  readConfig,
} = require('./lib/list-config');
const { ListLoad, peakRssMb } = require('./lib/list-load');
const {
  logHeader,
  ratiosOf,
  printResults,
  profileSummaries,
  resultsOf,
} = require('./lib/list-report');
const { analyze, prepareDatabase, databaseLabel, seed, startTargets } = require('./lib/list-setup');
const { createProcesses } = require('./lib/processes');

let config;
try {
  config = readConfig();
} catch (error) {
  console.error(`BENCHMARK FAILED: ${error.message}`);
  process.exit(2);
}

function log(message = '') {
  process.stdout.write(`${message}\n`);
}

/** The servers, the temporary directory and the database, removed however the run ends. */
const processes = createProcesses({ repoRoot: REPO_ROOT, log, adminUrl: config.adminUrl });
const listLoad = new ListLoad(config, log);

/** The figures printed and written to the results file; the process's exit code. */
async function main() {
  for (const file of [SERVER_MAIN, CLI_MAIN]) {
    if (!fs.existsSync(file)) {
      throw new BenchError(
        `${path.relative(REPO_ROOT, file)} is missing: build the server first (pnpm --filter @platform/server build; \`pnpm bench\` does it).`,
      );
    }
  }

  logHeader(config, log);

  const context = { config, processes, log };
  const database = await prepareDatabase(context, processes.makeTmpDir());
  log(`Seeding ${STUDENTS} students into ${databaseLabel(config, database)}…`);
  const { token, organizationId } = seed(database);
  await analyze(database);

  const { server, bare, targets } = await startTargets(context, database, organizationId, token);

  const bytes = await checkSamples(log, targets, database, organizationId);

  const { cases, problems } = await listLoad.measure(targets);
  const memory = { server_peak_rss_mb: peakRssMb(server), bare_peak_rss_mb: peakRssMb(bare) };

  const ratios = ratiosOf(config, cases);

  printResults(log, cases, ratios, bytes);

  const profiles = config.cpuProfile ? profileSummaries(log, cases) : {};

  const missed = ratios.filter((r) => r.met === false);
  const results = resultsOf(config, { bytes, cases, ratios, memory, profiles, missed, problems });
  fs.mkdirSync(RESULTS_DIR, { recursive: true });
  fs.writeFileSync(config.resultsFile, `${JSON.stringify(results, null, 2)}\n`);
  log();
  log(`Results written to ${path.relative(REPO_ROOT, config.resultsFile)}`);

  log();
  if (problems.length) {
    log(
      `FAILED: ${problems.length} problem(s) during the load; the figures above are not trustworthy:`,
    );
    for (const p of problems) log(`  - ${p}`);
    processes.printOutput(server);
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
    await processes.cleanup();
    process.exitCode = code;
  })
  .catch(async (error) => {
    listLoad.stop();
    log();
    log(
      `BENCHMARK FAILED: ${error instanceof BenchError ? error.message : (error?.stack ?? error)}`,
    );
    await processes.cleanup();
    process.exitCode = 1;
  });
