// The SDK conformance suite (test/conformance.test.ts): run on its own, so that its count is
// reported per SDK by tooling/conformance rather than folded into this package's unit tests.
module.exports = require('@platform/jest-config').config({
  rootDir: __dirname,
  testRegex: ['conformance\\.test\\.ts$'],
});
