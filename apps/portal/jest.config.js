// The browser suite: the real server (apps/server/dist/main.js) and Debian's Chromium, one
// journey after another in one file, so it runs alone and with a longer timeout.
module.exports = {
  ...require('@platform/jest-config').config({
    rootDir: __dirname,
    testRegex: ['\\.e2e-spec\\.ts$'],
    testTimeout: 60000,
  }),
  moduleFileExtensions: ['ts', 'tsx', 'js', 'json'],
};
