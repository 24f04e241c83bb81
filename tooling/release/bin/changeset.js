#!/usr/bin/env node
// The root `changeset` script: runs the Changesets CLI unchanged, and after `changeset version`
// carries the fixed group's new version into what Changesets cannot see (the SDKs' version
// constants, the OpenAPI document and the files generated from it), so `pnpm changeset version`
// alone leaves every place in agreement. Changesets has no post-version hook, hence the wrapper.
'use strict';
const { spawnSync } = require('node:child_process');
const path = require('node:path');

const root = path.resolve(__dirname, '../../..');
const cli = require.resolve('@changesets/cli/bin.js', { paths: [root] });
const args = process.argv.slice(2);
const run = (command, commandArgs) =>
  spawnSync(command, commandArgs, { cwd: root, stdio: 'inherit' }).status ?? 1;

let status = run(process.execPath, [cli, ...args]);
if (status === 0 && args[0] === 'version') {
  status = run(process.execPath, [path.join(__dirname, 'sync-versions.js')]);
  // Changesets writes the changelogs in its own Markdown style; the repository's is prettier's.
  if (status === 0) {
    status = run(process.execPath, [
      require.resolve('prettier/bin/prettier.cjs', { paths: [root] }),
      '--write',
      '--log-level=warn',
      '**/CHANGELOG.md',
      '.changeset',
    ]);
  }
}
process.exit(status);
