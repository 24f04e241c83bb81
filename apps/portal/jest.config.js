// The browser suite: the real server (apps/server/dist/main.js) and Debian's Chromium, one
// journey after another in each file, hence the longer timeout. Each file starts its own server,
// database and browser, so two files run at once (package.json's --maxWorkers=2): 372 s for the
// 16 files on the 2-core machine, where one at a time took 496 s.
module.exports = {
  ...require('@platform/jest-config').config({
    rootDir: __dirname,
    testRegex: ['\\.e2e-spec\\.ts$'],
    testTimeout: 60000,
  }),
  moduleFileExtensions: ['ts', 'tsx', 'js', 'json'],
};
