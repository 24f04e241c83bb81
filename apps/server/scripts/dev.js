// `pnpm dev` for the server: tsc --watch recompiles on change, and once the first compile is
// done, node runs the server and restarts it when its compiled code (dist/) or the contract's
// build (packages/contract/dist) changes. Only those two paths are watched (--watch-path): plain
// `--watch` follows every imported file, including the temporary config files Vite writes and
// deletes under apps/portal/node_modules/.vite-temp, and restarted the server over and over. DEV_BOOTSTRAP seeds an empty database and prints the URL, the docs URL and a curl
// command with a demo token, and the portal's URL with a demo admin's sign-in.
const { spawn } = require('node:child_process');
const path = require('node:path');

const root = path.join(__dirname, '..');
const tsc = require.resolve('typescript/bin/tsc');
const contractDist = path.dirname(require.resolve('@platform/contract', { paths: [root] }));
// With --watch-path, node watches only these (and needs the entry named as well).
const WATCHED = [path.join(root, 'dist'), contractDist];
const children = [];

const compiler = spawn(
  process.execPath,
  // Build mode: with dist up to date (dist/.tsbuildinfo) the first compile takes a second.
  [tsc, '-b', 'tsconfig.build.json', '--watch', '--preserveWatchOutput'],
  {
    cwd: root,
    stdio: ['ignore', 'pipe', 'inherit'],
  },
);
children.push(compiler);

let server;
compiler.stdout.setEncoding('utf8');
compiler.stdout.on('data', (chunk) => {
  process.stdout.write(chunk);
  if (!server && /Found 0 errors/.test(chunk)) {
    server = spawn(
      process.execPath,
      [...WATCHED.map((dir) => `--watch-path=${dir}`), 'dist/main.js'],
      {
        cwd: root,
        stdio: 'inherit',
        env: {
          NODE_ENV: 'development',
          DEV_BOOTSTRAP: 'true',
          // The portal from its sources through Vite, with hot reload (src/portal/portal-serving.ts).
          PORTAL_DEV: 'true',
          LOG_LEVEL: 'warn',
          // The webhook inspector listens on loopback over http.
          WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
          ...process.env,
        },
      },
    );
    children.push(server);
  }
});

function stop() {
  for (const child of children) child.kill('SIGTERM');
}
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
compiler.on('exit', stop);
