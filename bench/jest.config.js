// The benchmarks' own helpers (lib/): plain JavaScript, so no transform beyond the shared preset's.
module.exports = require('@platform/jest-config').config({
  rootDir: __dirname,
  testRegex: '/lib/.*\\.spec\\.js$',
});
