module.exports = {
  ...require('@platform/jest-config').config({ rootDir: __dirname, testTimeout: 60000 }),
  // The two-instance suite needs PostgreSQL and Redis; `pnpm test:scale-out` runs it.
  testPathIgnorePatterns: ['/node_modules/', '/test-scale-out/'],
};
