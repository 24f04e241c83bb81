'use strict';
/**
 * The students-list benchmark's settings (students-list.bench.js): what it seeds and measures, the
 * goals it judges, the files it runs and writes, and the knobs read from the environment.
 */
const path = require('node:path');
const { BenchError } = require('./bench-error');
const { envNumber } = require('./harness');

const BENCH_DIR = path.resolve(__dirname, '..');
const REPO_ROOT = path.resolve(BENCH_DIR, '..');
const SERVER_MAIN = path.join(REPO_ROOT, 'apps', 'server', 'dist', 'main.js');
const CLI_MAIN = path.join(REPO_ROOT, 'apps', 'server', 'dist', 'cli', 'main.js');
const BARE_MAIN = path.join(BENCH_DIR, 'bare-students-server.js');
const PEER_MAIN = path.join(BENCH_DIR, 'nest-peer-server.js');
const RESULTS_DIR = path.join(BENCH_DIR, 'results');
const PROFILER_PRELOAD = path.join(BENCH_DIR, 'profiling', 'inspector-profiler.js');

const STUDENTS = 10_000;
const PER_PAGE = 25;
const PAGES = [1, 300];
/** The deep page, also measured through the keyset cursor links.next gives (issue 43). */
const DEEP_PAGE = 300;
/** Far above anything the load can reach in a minute, so the rate limiter never answers 429. */
const RATE_LIMIT_PER_MINUTE = 1_000_000;

const GOALS = {
  // Issue 17: the server keeps at least this share of the bare baseline's throughput (goal 1 on
  // SQLite, goal 2 on PostgreSQL against node-postgres).
  serverOverBarePage1: { sqlite: { min: 0.7 }, postgres: { min: 0.6 } },
  // A deep page reached as a walk does, through links.next's cursor; by number it is context.
  serverDeepPageCost: { max: 1.5 },
  // Issue 43: at least this many times the throughput of the list the frameworks' docs teach.
  serverOverPeerPage1: { min: 1.5 },
  // Context only: how much a deep page costs the baseline doing the same SQL.
  bareDeepPageCost: null,
};

/** The settings from the environment; throws a BenchError on a bad value. */
function readConfig() {
  const config = {
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
  return {
    ...config,
    resultsFile: path.join(
      RESULTS_DIR,
      config.database === 'sqlite' ? 'students-list.json' : `students-list-${config.database}.json`,
    ),
    profilesDir: path.join(
      RESULTS_DIR,
      config.database === 'sqlite' ? 'profiles' : `profiles-${config.database}`,
    ),
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

function pageUrl(base, page) {
  return `${base}/v1/students?per_page=${PER_PAGE}&page=${page}`;
}

module.exports = {
  REPO_ROOT,
  SERVER_MAIN,
  CLI_MAIN,
  BARE_MAIN,
  PEER_MAIN,
  RESULTS_DIR,
  PROFILER_PRELOAD,
  STUDENTS,
  PER_PAGE,
  PAGES,
  DEEP_PAGE,
  RATE_LIMIT_PER_MINUTE,
  GOALS,
  readConfig,
  pageUrl,
};
