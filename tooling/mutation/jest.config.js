// The Jest config Stryker runs one module's tests with (bin/mutation.js names the module in
// PLATFORM_MUTATION_MODULE): its package's own config, narrowed to the module's test files.
// Loaded inside Stryker's sandbox, so every path below is the sandbox's copy.
'use strict';
const path = require('node:path');
const { moduleNamed } = require('./modules');

const repo = path.resolve(__dirname, '../..');
const mod = moduleNamed(process.env.PLATFORM_MUTATION_MODULE);
const rootDir = path.join(repo, mod.package);

let config = require(path.join(rootDir, 'jest.config.js'));
if (config.projects) {
  // A package with several projects (the server): its first, the in-process suites, with the
  // options Jest reads once per run.
  const { projects, ...run } = config;
  const { displayName: _name, ...project } = projects[0];
  config = { ...run, ...project };
}

const tests = mod.tests.map((file) => path.join(repo, file));
const { testRegex: _regex, ...rest } = config;

module.exports = {
  ...rest,
  rootDir,
  // A test file may live in another package (the contract's list.spec.ts under the server's config).
  roots: [
    rootDir,
    ...new Set(
      tests.map((file) => path.dirname(file)).filter((dir) => !`${dir}/`.startsWith(`${rootDir}/`)),
    ),
  ],
  testMatch: tests,
};
