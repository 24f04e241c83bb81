#!/usr/bin/env node
// CI: fails when any package of the release, or any version constant, disagrees with the others.
'use strict';
const { checkVersions } = require('../src/versions');
// An optional argument names another checkout (the tests point it at a copy).
const root = require('node:path').resolve(process.argv[2] ?? `${__dirname}/../../..`);
const { version, versions, errors } = checkVersions(root);
if (errors.length > 0) {
  console.error(`check-versions: the release's packages disagree:\n  ${errors.join('\n  ')}`);
  console.error('Fix: pnpm changeset version (or pnpm version:sync after editing a package.json).');
  process.exit(1);
}
console.log(`check-versions: ${versions.length} places all say ${version}`);
