#!/usr/bin/env node
// `pnpm dev` for a library package: runs its build again whenever a file under src/ changes,
// but not at start. turbo has just built it (the dev task depends on ^build) or restored it from
// its cache; `tsup --watch` would rebuild it at once, declarations included, on the same cores
// the server's first compile needs. fs.watch (recursive since Node 20 on Linux) and a debounce
// are all this takes, so no watcher library.
//   node ../../scripts/rebuild-on-change.js -- pnpm run build
const { spawn } = require('node:child_process');
const { watch } = require('node:fs');
const path = require('node:path');

const separator = process.argv.indexOf('--');
const command = process.argv.slice(separator + 1);
if (separator === -1 || command.length === 0) {
  console.error('usage: rebuild-on-change.js -- <build command…>');
  process.exit(2);
}
const src = path.resolve('src');
let timer;
let running;
let again = false;

function build() {
  if (running) {
    again = true;
    return;
  }
  running = spawn(command[0], command.slice(1), { stdio: 'inherit' });
  running.on('exit', (code) => {
    running = undefined;
    console.log(
      code === 0 ? 'rebuilt; watching src/' : `build failed (exit ${code}); watching src/`,
    );
    if (again) {
      again = false;
      build();
    }
  });
}

watch(src, { recursive: true }, () => {
  clearTimeout(timer);
  timer = setTimeout(build, 200);
});
console.log(`watching ${path.relative(process.cwd(), src) || src}/ (built by turbo before start)`);
