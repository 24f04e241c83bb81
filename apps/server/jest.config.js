// Two projects in one run (one summary report for .ci/run): the suites that run the app (and the
// CLI's commands) in Jest's own processes, and those that spawn `node dist/main.js` or the CLI
// binary (they need `pnpm build`, take seconds per process start, and can be run alone with
// `npx jest --selectProjects processes`).
const base = require('@platform/jest-config').config({ rootDir: __dirname, testTimeout: 60000 });

const PROCESS_SUITES = ['cli-binary', 'server-start', 'webhook-crash'];
const processSuite = (name) => `/test/${name}\\.e2e-spec\\.ts$`;

// Per-project copies of the preset without the options Jest only reads once per run.
const { reporters, testTimeout, globalSetup: _s, globalTeardown: _t, ...project } = base;

module.exports = {
  rootDir: __dirname,
  reporters,
  testTimeout,
  // The hermetic guard's hooks, plus one migrated template database per run (test/support).
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  projects: [
    {
      ...project,
      displayName: 'in-process',
      // The two-instance suite needs PostgreSQL and Redis; `pnpm test:scale-out` runs it.
      testPathIgnorePatterns: [
        '/node_modules/',
        '/test-scale-out/',
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
