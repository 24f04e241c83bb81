// Two projects in one run (one summary report for .ci/run): the suites that run the app (and the
// CLI's commands) in Jest's own processes, and those that spawn `node dist/main.js` or the CLI
// binary (they need `pnpm build`, take seconds per process start, and can be run alone with
// `npx jest --selectProjects processes`).
const base = require('@platform/jest-config').config({ rootDir: __dirname, testTimeout: 60000 });

const PROCESS_SUITES = ['cli-binary', 'dev-script', 'generator', 'server-start', 'webhook-crash'];
const processSuite = (name) => `/test/${name}\\.e2e-spec\\.ts$`;

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
      testRegex: PROCESS_SUITES.map(processSuite),
      testPathIgnorePatterns: ['/node_modules/'],
    },
  ],
};
