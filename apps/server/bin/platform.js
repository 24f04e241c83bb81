#!/usr/bin/env node
// `pnpm platform …`: brings the server's build up to date (turbo, cached), then runs the admin
// CLI. It is a bin, linked into the workspace root, rather than a root script because pnpm prints
// a banner on stdout before every script; `pnpm <bin>` runs without one, so stdout is the CLI's
// alone and `pnpm platform … --json | jq` works. The build reports on stderr.
const { spawnSync } = require('node:child_process');
const path = require('node:path');

const server = path.join(__dirname, '..');
const root = path.join(server, '..', '..');

const build = spawnSync(
  process.execPath,
  [
    require.resolve('turbo/bin/turbo', { paths: [root] }),
    'run',
    'build',
    '--filter=@platform/server...',
    '--output-logs=errors-only',
  ],
  { cwd: root, stdio: ['ignore', 2, 2] },
);
if (build.status !== 0) process.exit(build.status ?? 1);

const cli = spawnSync(
  process.execPath,
  [path.join(server, 'dist', 'cli', 'main.js'), ...process.argv.slice(2)],
  { stdio: 'inherit' },
);
process.exit(cli.status ?? 1);
