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
/** How long a restart lets the old server shut down gracefully before it kills it. */
const KILL_AFTER_MS = 5000;

/** Compiled code: what the server runs (declarations, maps and tsc's build info are not). */
const CODE = /\.(c|m)?js$|\.json$/;

/** The files under `dir`, sorted; none if it is missing (a clean build deletes dist/). */
function filesUnder(dir) {
  try {
    return fs
      .readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile() && CODE.test(entry.name))
      .map((entry) => path.join(entry.parentPath, entry.name))
      .sort();
  } catch {
    return [];
  }
}

/** One digest of the compiled code under both trees, by path and bytes. */
function digest() {
  const hash = createHash('sha1');
  for (const file of WATCHED.flatMap(filesUnder)) {
    try {
      hash.update(file).update('\0').update(fs.readFileSync(file)).update('\0');
    } catch {
      // Deleted while being read: the next burst's digest sees it gone.
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
/** A restart waits for the old server to exit (it holds the port); later ones fold into it. */
let restarting = false;
let settleTimer;
const watchers = new Map();

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
      // Invitations go to the inspector's mail catcher (apps/webhook-inspector, /mail).
      SMTP_URL: 'smtp://127.0.0.1:1025',
      MAIL_FROM: 'Platform (pnpm dev) <no-reply@localhost>',
      ...process.env,
    },
  });
}

/** Restarts the server once it has exited; it then loads whatever dist/ holds by that time. */
function restart() {
  if (restarting) return;
  console.log("Restarting 'dist/main.js'");
  const old = server;
  if (old.exitCode !== null || old.signalCode !== null) return startServer();
  restarting = true;
  // A server stopped while it was still starting can take its whole shutdown bound to exit.
  const kill = setTimeout(() => old.kill('SIGKILL'), KILL_AFTER_MS);
  old.once('exit', () => {
    clearTimeout(kill);
    restarting = false;
    if (!stopping) startServer();
  });
  old.kill('SIGTERM');
}

/** Watches the trees (again, for one deleted and made anew); after each burst, compares digests. */
function watch() {
  let last = digest();
  const settle = () => {
    clearTimeout(settleTimer);
    settleTimer = setTimeout(() => {
      if (stopping) return;
      watchTrees(settle);
      const next = digest();
      if (next === last) return;
      last = next;
      restart();
    }, SETTLE_MS);
  };
  watchTrees(settle);
  // A tree deleted (or deleted and made anew) is watched again within a second, and compared.
  setInterval(() => {
    if (WATCHED.some((dir) => watchers.get(dir)?.ino !== inode(dir))) settle();
  }, 1000).unref();
}

/** The tree's identity: a tree deleted and made anew is another directory to watch. */
function inode(dir) {
  try {
    return fs.statSync(dir).ino;
  } catch {
    return undefined;
  }
}

function watchTrees(onEvent) {
  for (const dir of WATCHED) {
    const current = inode(dir);
    const watched = watchers.get(dir);
    if (watched && watched.ino === current) continue;
    watched?.watcher.close();
    watchers.delete(dir);
    let watcher;
    try {
      watcher = fs.watch(dir, { recursive: true }, onEvent);
    } catch {
      continue; // Missing (or gone since): the interval looks again.
    }
    watcher.on('error', () => {
      watcher.close();
      if (watchers.get(dir)?.watcher === watcher) watchers.delete(dir);
    });
    watchers.set(dir, { watcher, ino: current });
  }
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
  clearTimeout(settleTimer);
  for (const { watcher } of watchers.values()) watcher.close();
  compiler.kill('SIGTERM');
  server?.kill('SIGTERM');
}
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
compiler.on('exit', stop);
// Whatever ends this process ends its children too.
process.on('exit', () => {
  compiler.kill('SIGTERM');
  server?.kill('SIGTERM');
});
