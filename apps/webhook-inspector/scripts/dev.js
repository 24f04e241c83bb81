// `pnpm dev` for the inspector: tsc --watch recompiles on change, and once the first compile is
// done, node --watch runs the inspector and restarts it when its compiled code changes (which
// empties its in-memory list of deliveries).
const { spawn } = require('node:child_process');
const path = require('node:path');

const root = path.join(__dirname, '..');
const tsc = require.resolve('typescript/bin/tsc');
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

let inspector;
compiler.stdout.setEncoding('utf8');
compiler.stdout.on('data', (chunk) => {
  process.stdout.write(chunk);
  if (!inspector && /Found 0 errors/.test(chunk)) {
    inspector = spawn(process.execPath, ['--watch', 'dist/main.js'], {
      cwd: root,
      stdio: 'inherit',
    });
    children.push(inspector);
  }
});

function stop() {
  for (const child of children) child.kill('SIGTERM');
}
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
compiler.on('exit', stop);
