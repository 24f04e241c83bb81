// Lints the JavaScript no package lints itself: scripts/, bench/ and the tooling packages without
// an ESLint setup of their own (root `pnpm lint` runs it as the `lint:js` task). Packages with
// their own eslint.config.js lint their files, JavaScript included, and are left out here.
const { javascript } = require('./tooling/eslint');

module.exports = [
  {
    ignores: [
      '**/node_modules/**',
      '**/dist/**',
      'apps/**',
      'packages/**',
      'tooling/sdk-codegen/**',
      'release/**',
      'bench/results/**',
      '**/*.ts',
    ],
  },
  ...javascript(),
];
