// The shared preset by path: @platform/jest-config depends on this package, so depending on it
// back would make a cycle.
module.exports = require('../jest/index.js').config({
  rootDir: __dirname,
  testRegex: ['\\.spec\\.js$'],
  testTimeout: 120000,
});
