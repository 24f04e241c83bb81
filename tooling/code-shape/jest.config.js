module.exports = require('@platform/jest-config').config({
  rootDir: __dirname,
  testRegex: ['\\.spec\\.js$'],
  testTimeout: 60000,
});
