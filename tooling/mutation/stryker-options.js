// The Stryker options of one module's run (bin/mutation.js). A file of its own because a score
// depends on it: it is among every module's inputs (src/inputs.js), so changing it rescores all.
'use strict';
const path = require('node:path');
const { DEFAULT_THRESHOLD } = require('./modules');

/**
 * @param {{ name: string, mutate: string, threshold?: number }} mod
 * @param {{ incremental: boolean, force: boolean, interactive: boolean }} run
 */
function strykerOptions(mod, { incremental, force, interactive }) {
  return {
    testRunner: 'jest',
    // Stryker looks for plugins beside itself; pnpm keeps them apart, so by path (its ESM entry).
    plugins: [
      path.join(
        path.dirname(require.resolve('@stryker-mutator/jest-runner/package.json')),
        'dist/src/index.js',
      ),
    ],
    jest: {
      projectType: 'custom',
      configFile: 'tooling/mutation/jest.config.js',
      enableFindRelatedTests: false,
    },
    mutate: [mod.mutate],
    // Each mutant runs only the tests that executed its code in the initial run.
    coverageAnalysis: 'perTest',
    // Stryker's own reuse of earlier results, for a local `--incremental` run only: it notices
    // changes to the module and its test files, not to the code the tests drive.
    incremental,
    incrementalFile: `reports/mutation/${mod.name}.incremental.json`,
    force,
    // Only what the suites load is copied; node_modules are linked.
    ignorePatterns: [
      '/*',
      '!/package.json',
      '!/apps',
      '/apps/*',
      '!/apps/server',
      '!/packages',
      '/packages/*',
      '!/packages/contract',
      '!/packages/client',
      '!/tooling',
      '/tooling/*',
      '!/tooling/mutation',
      '!/conformance',
      'dist',
    ],
    // One per module, removed by the parent: Stryker leaves its sandbox behind.
    tempDirName: `.stryker-tmp/${mod.name}`,
    concurrency: Number(process.env.PLATFORM_MUTATION_CONCURRENCY ?? 2),
    reporters: ['clear-text', 'html', interactive ? 'progress' : 'dots'],
    clearTextReporter: { allowColor: false, reportTests: false, reportScoreTable: false },
    htmlReporter: { fileName: `reports/mutation/${mod.name}.html` },
    thresholds: { high: 95, low: mod.threshold ?? DEFAULT_THRESHOLD, break: null },
    fileLogLevel: 'off',
    logLevel: process.env.PLATFORM_MUTATION_LOG_LEVEL ?? 'info',
  };
}

module.exports = { strykerOptions };
