#!/usr/bin/env node
// `pnpm platform …`: the admin CLI's own entry (it brings the server's build up to date first),
// except `pnpm platform listen …`, the SDK's platform-listen command pointed by default at
// `pnpm dev` (PORT, else 3000) with the demo token it keeps in data/dev-token.
const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

if (process.argv[2] !== 'listen') {
  require('../../apps/server/bin/platform.js');
} else {
  const root = path.join(__dirname, '..', '..');
  const build = spawnSync(
    process.execPath,
    [
      require.resolve('turbo/bin/turbo', { paths: [root] }),
      'run',
      'build',
      '--filter=@platform/client',
      '--output-logs=errors-only',
    ],
    { cwd: root, stdio: ['ignore', 2, 2] },
  );
  if (build.status !== 0) process.exit(build.status ?? 1);
  const devToken = path.join(root, 'data', 'dev-token');
  const env = {
    ...process.env,
    PLATFORM_URL: process.env.PLATFORM_URL ?? `http://127.0.0.1:${process.env.PORT ?? 3000}`,
    ...(process.env.PLATFORM_TOKEN === undefined &&
      fs.existsSync(devToken) && { PLATFORM_TOKEN: fs.readFileSync(devToken, 'utf8').trim() }),
  };
  const listen = spawn(
    process.execPath,
    [path.join(root, 'packages', 'client', 'dist', 'listen.js'), ...process.argv.slice(3)],
    { stdio: 'inherit', env },
  );
  // Ctrl-C reaches the command from the terminal; a SIGTERM sent to this process is passed on.
  // Either way this process waits for the command to stop, and exits as it did.
  process.on('SIGINT', () => undefined);
  process.on('SIGTERM', () => listen.kill('SIGTERM'));
  listen.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}
