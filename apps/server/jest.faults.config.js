// `pnpm test:faults`: the fault-injection suite (test/faults/), real server processes on SQLite,
// on a PostgreSQL and a Redis of its own (stopped and started by the scenarios), one scenario at
// a time. Prints the table of outcomes at the end (test/faults/global-teardown.ts).
const base = require('@platform/jest-config').config({ rootDir: __dirname, testTimeout: 300000 });

module.exports = {
  ...base,
  roots: ['<rootDir>/test/faults'],
  maxWorkers: 1,
  globalSetup: '<rootDir>/test/faults/global-setup.ts',
  globalTeardown: '<rootDir>/test/faults/global-teardown.ts',
};
