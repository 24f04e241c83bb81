#!/usr/bin/env node
// The workspace's postinstall: `pnpm install` runs it last, with node_modules/.bin first on PATH,
// so `node` here is the Node that every pnpm script, test and server uses. That is Node 24 from
// the optional dependency node-linux-<arch> (whatever older Node pnpm itself runs on), else the
// machine's own. This fails the install with the fix spelled out when it is older than 24, or
// when better-sqlite3 (a prebuilt Node-API binary, so no per-Node-version build) cannot load.
'use strict';

const { spawnSync } = require('node:child_process');
const path = require('node:path');

const REQUIRED_MAJOR = 24;

function fail(message) {
  process.stderr.write(`\ncheck-runtime: ${message}\n\n`);
  process.exit(1);
}

const major = Number(process.versions.node.split('.')[0]);
if (major < REQUIRED_MAJOR) {
  fail(
    `this workspace runs on Node ${REQUIRED_MAJOR}, but its scripts found Node ` +
      `${process.versions.node} (${process.execPath}).\n` +
      `On Linux x64 and arm64 \`pnpm install\` brings Node ${REQUIRED_MAJOR} itself (the optional ` +
      'dependency node-linux-<arch>, linked as node_modules/.bin/node); here it did not, because ' +
      'npm has no such package for this platform or optional dependencies were left out.\n' +
      `Install Node ${REQUIRED_MAJOR} (\`nvm install\` reads .nvmrc), then run \`pnpm install\` again.`,
  );
}

let addon;
try {
  addon = require.resolve('better-sqlite3', { paths: [path.join(__dirname, '../apps/server')] });
} catch {
  // Not installed (e.g. a filtered install of packages that do not need it).
}
if (addon) {
  // In a child process: a binary that cannot load aborts at dlopen.
  const probe = `const D = require(${JSON.stringify(addon)}); new D(':memory:').close();`;
  const result = spawnSync(process.execPath, ['-e', probe], { encoding: 'utf8' });
  if (result.status !== 0) {
    fail(
      `better-sqlite3 does not load on Node ${process.versions.node} ` +
        `(${process.platform}-${process.arch}):\n${(result.stderr || '').trim()}\n` +
        'It ships prebuilt binaries for Linux (glibc, musl), macOS and Windows on x64 and arm64; ' +
        'elsewhere compile it once: `cd` into its directory and run `npx node-gyp rebuild --release`.',
    );
  }
}
console.log(
  `check-runtime: Node ${process.versions.node} (${process.execPath}); better-sqlite3 loads.`,
);

// pnpm links Node 24 as node_modules/.bin/node, a shell script that runs the binary as its child
// and waits. A signal sent to a script's process (SIGTERM from a process manager to `pnpm start`)
// then stops at that shell and leaves Node running, orphaned and still serving. With `exec` the
// shell becomes Node, so the signal reaches it. Rewritten here because pnpm writes the shim anew
// on every install; the postinstall runs after it.
const fs = require('node:fs');

function execNodeShim(shim) {
  let text;
  try {
    text = fs.readFileSync(shim, 'utf8');
  } catch {
    return false;
  }
  const call = /^("\$basedir\/[^"\n]*\/bin\/node"\s+"\$@")$/m;
  if (!text.startsWith('#!/bin/sh') || !call.test(text)) return false;
  const rewritten = text.replace(call, 'exec $1');
  const temporary = `${shim}.${process.pid}`;
  fs.writeFileSync(temporary, rewritten, { mode: fs.statSync(shim).mode });
  fs.renameSync(temporary, shim);
  return true;
}

if (execNodeShim(path.join(__dirname, '..', 'node_modules', '.bin', 'node'))) {
  console.log('check-runtime: node_modules/.bin/node now replaces itself with Node (exec).');
}
