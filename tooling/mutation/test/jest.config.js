// The tests of the mutation tool itself (its ledger and input hashing). Not ../jest.config.js:
// that one is the config Stryker runs a module's tests with.
module.exports = require('@platform/jest-config').config({
  rootDir: require('node:path').resolve(__dirname, '..'),
  testRegex: ['/test/.*\\.spec\\.js$'],
});
