// Two projects in one run (one summary report for .ci/run): the suites that run the app (and the
// CLI's commands) in Jest's own processes, and those that spawn `node dist/main.js` or the CLI
// binary (they need `pnpm build`, take seconds per process start, and can be run alone with
// `npx jest --selectProjects processes`).
const fs = require('node:fs');
const path = require('node:path');
const { suitesReading } = require('@platform/jest-config/suites');

const base = require('@platform/jest-config').config({ rootDir: __dirname, testTimeout: 60000 });

const PROCESS_SUITES = [
  'cli-binary',
  'dev-script',
  'generator',
  'import-crash',
  'server-start',
  'webhook-crash',
];
const processSuite = (name) => `/test/${name}\\.e2e-spec\\.ts$`;

// CI runs this package's suites three times: on SQLite (every file), on PostgreSQL and on
// PostgreSQL + Redis. The second and third runs take only the files whose outcome that
// deployment can change (PLATFORM_TEST_DEPLOYMENT, set by `test:postgres` and `test:redis`);
// docs/decisions/0022-ci-time.md says why. The PostgreSQL selection is computed (every file that
// reads TEST_DATABASE_URL, itself or through test/support); the Redis one is named here, each
// file for the Redis-backed part it drives (the rate-limit store, BullMQ, the feed's pub/sub,
// readiness), and checked to exist. Mutation scores do not depend on this list: they are taken
// without PLATFORM_TEST_DEPLOYMENT (tooling/mutation/src/inputs.js).
const REDIS_SUITES = {
  // The sliding window and its costs in Redis (Lua), and what spends it.
  'rate-limit': 'request costs, 429s and Retry-After from the Redis window',
  'anonymous-callers': 'failed authentication spends a budget in the shared store',
  auth: 'failed authentication spends a budget in the shared store',
  oauth: 'sign-in throttling on the shared store',
  'organization-api': 'X-RateLimit-* headers read from the shared store',
  // Webhook deliveries go through BullMQ instead of the embedded dispatcher.
  'webhook-delivery': 'deliveries, retries and their timing through BullMQ',
  'webhook-replay': 'replays queued through BullMQ',
  'webhook-fairness': "one organization's backlog cannot starve another's in BullMQ",
  'webhook-endpoints': 'test deliveries and endpoint changes seen by the BullMQ worker',
  'webhook-crash': 'a delivery in flight when the server dies, recovered from BullMQ',
  outbox: 'the outbox relay into the queue',
  offboarding: 'deliveries stop when their endpoint is offboarded, queued jobs included',
  delegation: "deliveries follow the endpoint owner's access",
  metrics: 'queue depth and delivery metrics from BullMQ',
  usage: 'delivery outcomes counted from BullMQ deliveries',
  'log-secrets': "the BullMQ worker's log lines carry no secret",
  hermetic: 'the delivery-time address check in the BullMQ worker',
  // The change feed's wake-ups cross instances through Redis pub/sub.
  'change-feed': 'long-polls woken by pub/sub',
  'change-feed-read': 'long-polls woken by pub/sub',
  'change-feed-concurrency': 'ordering when writers and readers are on different instances',
  // Readiness checks Redis too.
  'http-conventions': '/ready reports Redis',
  durability: 'readiness and deliveries when writes fail, with Redis behind them',
  // What else reads the shared store's counts: X-RateLimit-* headers and 429s.
  portal: "the portal's own rate-limit budget",
  'cli-orgs': 'the remaining budget after a limit change',
  'token-cache': 'rate-limit headers of cached and revoked tokens',
  'export-download-links': 'the per-IP budget of link downloads',
  'contract-walk': 'per-IP 429s of anonymous callers',
};
const DEPLOYMENT = process.env.PLATFORM_TEST_DEPLOYMENT;
const deploymentSuites = () => {
  if (!process.env.TEST_DATABASE_URL || (DEPLOYMENT === 'redis' && !process.env.TEST_REDIS_URL)) {
    throw new Error(
      `PLATFORM_TEST_DEPLOYMENT=${DEPLOYMENT} needs TEST_DATABASE_URL${DEPLOYMENT === 'redis' ? ' and TEST_REDIS_URL' : ''} (scripts/throwaway-postgres.sh and scripts/throwaway-redis.sh print them)`,
    );
  }
  if (DEPLOYMENT === 'redis') {
    return Object.keys(REDIS_SUITES).map((name) => {
      const file = path.join(__dirname, 'test', `${name}.e2e-spec.ts`);
      if (!fs.existsSync(file)) throw new Error(`REDIS_SUITES names ${name}, which has no file`);
      return file;
    });
  }
  if (DEPLOYMENT === 'postgres') return suitesReading(__dirname, 'TEST_DATABASE_URL');
  throw new Error(`PLATFORM_TEST_DEPLOYMENT is ${DEPLOYMENT}: postgres or redis`);
};
const only = DEPLOYMENT ? deploymentSuites() : null;
const exactly = (files) =>
  files.length
    ? files.map(
        (file) => `/${path.relative(__dirname, file).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`,
      )
    : ['^$'];
const isProcessSuite = (file) =>
  PROCESS_SUITES.some((name) => new RegExp(processSuite(name)).test(file));

// Per-project copies of the preset without the options Jest only reads once per run.
const { reporters, testTimeout, globalSetup: _s, globalTeardown: _t, ...preset } = base;

// The contract from its source, not its build: a contract change is tested here without a
// `pnpm build` in between, and mutation testing (tooling/mutation) reaches its list.ts. The
// spawned servers (`processes`) still run dist/, which uses the contract's build.
const CONTRACT_SOURCE = {
  '^@platform/contract$': '<rootDir>/../../packages/contract/src/index.ts',
};
const project = { ...preset, moduleNameMapper: CONTRACT_SOURCE };

module.exports = {
  rootDir: __dirname,
  reporters,
  testTimeout,
  // Two files at a time on the 2-core machines we run on (Jest's default is cores - 1): most files
  // alternate between the test's client and the server in one process, and the webhook suites
  // spend much of their time waiting on real receivers, so a second worker fills those waits.
  // The timing assertions compare receipts with each other, not with a wall-clock budget, so
  // they hold on a busy machine. `--maxWorkers=1` for a quiet log.
  maxWorkers: 2,
  // The hermetic guard's hooks, plus one migrated template database per run (test/support).
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  projects: [
    {
      ...project,
      displayName: 'in-process',
      ...(only && { testRegex: exactly(only.filter((file) => !isProcessSuite(file))) }),
      // The two-instance suite needs PostgreSQL and Redis (`pnpm test:scale-out`), the fault
      // suite its own servers (`pnpm test:faults`).
      testPathIgnorePatterns: [
        '/node_modules/',
        '/test-scale-out/',
        '/test/faults/',
        ...PROCESS_SUITES.map(processSuite),
      ],
    },
    {
      ...project,
      displayName: 'processes',
      testRegex: only ? exactly(only.filter(isProcessSuite)) : PROCESS_SUITES.map(processSuite),
      testPathIgnorePatterns: ['/node_modules/'],
    },
  ],
};
