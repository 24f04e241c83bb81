// The browser suite: the real server (apps/server/dist/main.js) and Debian's Chromium, one
// journey after another in each file, so with a longer timeout. Each file starts its own server,
// database and browser, so two run at once (package.json's --maxWorkers=2): the 16 files took
// 372 s where one at a time took 496 s on the 2-core machine (each file ran about half as long
// again, sharing the cores, but two at a time).
module.exports = {
  ...require('@platform/jest-config').config({
    rootDir: __dirname,
    testRegex: ['\\.e2e-spec\\.ts$'],
    testTimeout: 60000,
  }),
  moduleFileExtensions: ['ts', 'tsx', 'js', 'json'],
};
