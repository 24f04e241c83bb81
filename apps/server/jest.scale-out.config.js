// The scale-out suite: two real server processes on PostgreSQL + Redis (see test-scale-out/).
module.exports = {
  ...require('@platform/jest-config').config({ rootDir: __dirname, testTimeout: 180000 }),
  roots: ['<rootDir>/test-scale-out'],
  // The hermetic guard's hooks, plus one migrated template database per run (test/support).
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
};
