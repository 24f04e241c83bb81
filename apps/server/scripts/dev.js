// `pnpm dev` for the server: tsc --watch recompiles on change, and once the first compile is
// done, node runs the server and restarts it when its compiled code (dist/) or the contract's
// build (packages/contract/dist) changes. DEV_BOOTSTRAP seeds an empty database and prints the
// URL, the docs URL and a curl command with a demo token, and the portal's URL with a demo admin's
// sign-in.
//
// What changed is judged by content, not by file events: a digest of both trees, taken again
// after each burst of events, restarts the server only when it differs. Node's own --watch and
// --watch-path restart on any write: a cached turbo build (`pnpm platform …` in another terminal,
// or any `turbo run build`) rewrites dist/ with the same bytes and restarted the server for
// nothing, and plain --watch also followed Vite's temporary config files under
// apps/portal/node_modules/.vite-temp. No watcher package (nodemon, chokidar) compares content.
const { spawn } = require('node:child_process');
const { createHash } = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..');
const tsc = require.resolve('typescript/bin/tsc');
const contractDist = path.dirname(require.resolve('@platform/contract', { paths: [root] }));
const WATCHED = [path.join(root, 'dist'), contractDist];
/** Quiet time after the last event before the trees are read again (a compile writes in bursts). */
const SETTLE_MS = 300;

/** One digest of every file under the watched trees (tsc's build info aside), by path and bytes. */
function digest() {
  const hash = createHash('sha1');
  for (const dir of WATCHED) {
    const files = fs.readdirSync(dir, { recursive: true, withFileTypes: true });
    const paths = files
      .filter((entry) => entry.isFile() && !entry.name.endsWith('.tsbuildinfo'))
      .map((entry) => path.join(entry.parentPath, entry.name))
      .sort();
    for (const file of paths) {
      try {
        hash.update(file).update('\0').update(fs.readFileSync(file)).update('\0');
      } catch {
        // Deleted while being read: the next burst's digest sees it gone.
      }
    }
  }
  return hash.digest('hex');
}

const compiler = spawn(
  process.execPath,
  // Build mode: with dist up to date (dist/.tsbuildinfo) the first compile takes a second.
  [tsc, '-b', 'tsconfig.build.json', '--watch', '--preserveWatchOutput'],
  { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] },
);

let server;
let stopping = false;
const watchers = [];

function startServer() {
  server = spawn(process.execPath, ['dist/main.js'], {
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
  });
}

/** Restarts the server once it has exited (it holds the port until then). */
function restart() {
  console.log("Restarting 'dist/main.js'");
  const old = server;
  if (old.exitCode !== null || old.signalCode !== null) return startServer();
  old.once('exit', () => {
    if (!stopping) startServer();
  });
  old.kill('SIGTERM');
}

function watch() {
  let last = digest();
  let timer;
  const settle = () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      const next = digest();
      if (next === last || stopping) return;
      last = next;
      restart();
    }, SETTLE_MS);
  };
  for (const dir of WATCHED) watchers.push(fs.watch(dir, { recursive: true }, settle));
}

compiler.stdout.setEncoding('utf8');
compiler.stdout.on('data', (chunk) => {
  process.stdout.write(chunk);
  if (!server && /Found 0 errors/.test(chunk)) {
    startServer();
    watch();
  }
});

function stop() {
  stopping = true;
  for (const watcher of watchers) watcher.close();
  compiler.kill('SIGTERM');
  server?.kill('SIGTERM');
}
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
compiler.on('exit', stop);
