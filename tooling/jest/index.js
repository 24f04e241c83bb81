// Shared Jest preset: swc transpiles TypeScript with decorator metadata (what Nest's DI needs),
// the summary reporter lets .ci/run add up passed/failed over every package, and the hermetic
// guard (@platform/hermetic) fails any test that tries to reach outside loopback.
const path = require('node:path');

/** @param {{ rootDir: string, testRegex?: string | string[], testTimeout?: number }} options */
function config({
  rootDir,
  testRegex = ['\\.spec\\.ts$', '\\.e2e-spec\\.ts$'],
  testTimeout = 30000,
}) {
  return {
    rootDir,
    testEnvironment: 'node',
    testRegex,
    testTimeout,
    moduleFileExtensions: ['ts', 'js', 'json'],
    transform: {
      '^.+\\.ts$': [
        require.resolve('@swc/jest'),
        {
          jsc: {
            parser: { syntax: 'typescript', decorators: true },
            transform: { legacyDecorator: true, decoratorMetadata: true },
            target: 'es2022',
          },
          module: { type: 'commonjs' },
          sourceMaps: 'inline',
        },
      ],
    },
    globalSetup: require.resolve('@platform/hermetic/jest-global-setup'),
    globalTeardown: require.resolve('@platform/hermetic/jest-global-teardown'),
    setupFilesAfterEnv: [require.resolve('@platform/hermetic/jest-setup')],
    reporters: [
      'default',
      path.join(__dirname, 'summary-reporter.js'),
      path.join(__dirname, 'slowest-reporter.js'),
    ],
  };
}

module.exports = { config };
