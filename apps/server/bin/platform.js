#!/usr/bin/env node
// `pnpm platform …`: brings the server's build up to date (turbo, cached), then runs the admin
// CLI. It is a bin, linked into the workspace root, rather than a root script because pnpm prints
// a banner on stdout before every script; `pnpm <bin>` runs without one, so stdout is the CLI's
// alone and `pnpm platform … --json | jq` works. The build reports on stderr.
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const server = path.join(__dirname, '..');
const root = path.join(server, '..', '..');

const turbo = require.resolve('turbo/bin/turbo', { paths: [root] });
const run = (file, args, env = process.env) =>
  spawnSync(process.execPath, [file, ...args], { stdio: 'inherit', env });

/** Builds `filter` (turbo, cached), reporting on stderr; exits if the build fails. */
function build(filter) {
  const result = spawnSync(
    process.execPath,
    [turbo, 'run', 'build', `--filter=${filter}`, '--output-logs=errors-only'],
    { cwd: root, stdio: ['ignore', 2, 2] },
  );
  if (result.status !== 0) process.exit(result.status ?? 1);
}

// `pnpm platform listen …` is the SDK's platform-listen command, pointed by default at `pnpm dev`
// (PORT, else 3000) with the demo token it keeps in data/dev-token.
if (process.argv[2] === 'listen') {
  build('@platform/client');
  const devToken = path.join(root, 'data', 'dev-token');
  const env = {
    ...process.env,
    PLATFORM_URL: process.env.PLATFORM_URL ?? `http://127.0.0.1:${process.env.PORT ?? 3000}`,
    ...(process.env.PLATFORM_TOKEN === undefined &&
      fs.existsSync(devToken) && { PLATFORM_TOKEN: fs.readFileSync(devToken, 'utf8').trim() }),
  };
  const listen = run(
    path.join(root, 'packages', 'client', 'dist', 'listen.js'),
    process.argv.slice(3),
    env,
  );
  process.exit(listen.status ?? 1);
}

build('@platform/server...');
const cli = run(path.join(server, 'dist', 'cli', 'main.js'), process.argv.slice(2));
process.exit(cli.status ?? 1);
