'use strict';
// What the release proof's steps share: where its files are, the pinned tools, and running a
// command with its output in the proof's log.

const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const PROOF_FILES = path.join(__dirname, '..', 'proof');
const PHP_README = path.join(__dirname, '..', '..', '..', 'packages', 'client-php', 'README.md');
/** Pinned so that every run tests the same runtimes; both ship their binaries as npm packages. */
const BUN = 'bun@1.4.5';
const DENO = 'deno@2.9.6';
const YARN = 'yarn@1.22.22';
/**
 * The JSON block after `<!-- proof: NAME … -->` in a README, with `<dir>` and `<version>` filled
 * in: what a user copies, proven as written.
 */
function readmeSnippet(file, name, values) {
  const text = fs.readFileSync(file, 'utf8');
  const match = new RegExp(`<!-- proof: ${name}\\b.*?-->\\s*\`\`\`json\\n([\\s\\S]*?)\`\`\``).exec(
    text,
  );
  if (!match) throw new Error(`${path.basename(file)} has no \`proof: ${name}\` JSON block`);
  const filled = match[1].replace(/<(dir|version)>/g, (_, key) =>
    JSON.stringify(values[key]).slice(1, -1),
  );
  return JSON.parse(filled);
}

const INSTALL_TIMEOUT_MS = 10 * 60_000;
const RUN_TIMEOUT_MS = 2 * 60_000;

/**
 * Runs a command without blocking the event loop (the live server runs in this process), with
 * its output in `logFile`. Resolves with { code, ms, output }; never rejects.
 */
function exec(command, args, { cwd, env, logFile, timeoutMs = RUN_TIMEOUT_MS }) {
  return new Promise((resolve) => {
    const started = Date.now();
    const chunks = [];
    fs.appendFileSync(logFile, `\n$ ${[command, ...args].join(' ')}   (in ${cwd})\n`);
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const timer = setTimeout(() => {
      chunks.push(Buffer.from(`\n(killed after ${timeoutMs / 1000} s)\n`));
      child.kill('SIGKILL');
    }, timeoutMs);
    child.stdout.on('data', (c) => chunks.push(c));
    child.stderr.on('data', (c) => chunks.push(c));
    const done = (code) => {
      clearTimeout(timer);
      const output = Buffer.concat(chunks).toString('utf8');
      fs.appendFileSync(logFile, output);
      resolve({ code, ms: Date.now() - started, output });
    };
    child.on('error', (error) => {
      chunks.push(Buffer.from(`could not run ${command}: ${error.message}\n`));
      done(127);
    });
    child.on('close', (code, signal) => done(signal ? 128 : (code ?? 1)));
  });
}

function writeJson(file, value) {
  fs.writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`);
}

/** The result of a check that could not run: a failure with the reason as its detail. */
function blocked(why) {
  return { code: 1, ms: 0, detail: why };
}

module.exports = {
  BUN,
  DENO,
  INSTALL_TIMEOUT_MS,
  PHP_README,
  PROOF_FILES,
  YARN,
  blocked,
  exec,
  readmeSnippet,
  writeJson,
};
