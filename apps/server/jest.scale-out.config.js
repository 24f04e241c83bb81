// The scale-out suite: two real server processes on PostgreSQL + Redis (see test-scale-out/).
module.exports = {
  ...require('@platform/jest-config').config({ rootDir: __dirname, testTimeout: 180000 }),
  roots: ['<rootDir>/test-scale-out'],
};
