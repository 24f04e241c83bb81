#!/usr/bin/env node
// pnpm test:mutation [module…] [--force] [--check] [--incremental] [--list] [--inputs <module>]
//
// Runs StrykerJS on each module of ../modules.js, one Stryker run per module, and checks each
// module's mutation score against its threshold. A score is measured once per state of what it
// depends on: ../ledger.json keeps, for each module, the hash of its inputs (the module, its
// tests, everything they load and the test configuration: ../src/inputs.js) with the score
// measured on them. A module whose hash matches its entry is taken from the ledger; any other
// is rescored from scratch and, when it reaches its threshold, its entry rewritten (commit it).
//   --force        rescore the modules (all, or those named) whatever the ledger says
//   --check        rescore nothing: exit 1 when an entry is missing, stale or below threshold
//   --incremental  a quick local rerun of the named modules that reuses Stryker's earlier
//                  results (reports/mutation/, not committed); never written to the ledger
//   --list         each module, its file, its inputs' count and whether its entry is current
//   --inputs <m>   the files module m's hash covers
'use strict';
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { DEFAULT_THRESHOLD, MODULES, moduleNamed } = require('../modules');
const { DEPLOYMENT_VARIABLES, moduleHash, trackedFiles } = require('../src/inputs');
const { planModules, readLedger, writeLedger } = require('../src/ledger');
const { acquireRunLock } = require('../src/run-lock');

const REPO = path.resolve(__dirname, '../../..');
const REPORTS = path.join(REPO, 'reports/mutation');

/** Mutant states that count: detected (killed, timed out) over detected and undetected. */
const DETECTED = new Set(['Killed', 'Timeout']);
const UNDETECTED = new Set(['Survived', 'NoCoverage']);

function usage(message) {
  if (message) console.error(`test:mutation: ${message}`);
  console.error(
    'usage: pnpm test:mutation [module…] [--force] [--check] [--incremental] [--list] [--inputs <module>]\n' +
      `modules: ${MODULES.map((m) => m.name).join(', ')}`,
  );
  process.exit(2);
}

function parseArgs(argv) {
  const args = {
    names: [],
    force: false,
    check: false,
    incremental: false,
    list: false,
    inputs: undefined,
    runModule: undefined,
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--force') args.force = true;
    else if (arg === '--check') args.check = true;
    else if (arg === '--incremental') args.incremental = true;
    else if (arg === '--list') args.list = true;
    else if (arg === '--inputs') args.inputs = argv[++i] ?? usage('--inputs needs a module');
    else if (arg === '--run-module') args.runModule = argv[++i];
    else if (arg === '--help' || arg === '-h') usage();
    else if (arg.startsWith('-')) usage(`unknown option ${arg}`);
    else args.names.push(arg);
  }
  if ([args.force, args.check, args.incremental].filter(Boolean).length > 1) {
    usage('choose one of --force, --check and --incremental');
  }
  if (args.incremental && !args.names.length) usage('--incremental needs the modules to rerun');
  return args;
}

/** Child process: one Stryker run for one module; writes its mutant states for the parent. */
async function runModule(name) {
  const mod = moduleNamed(name);
  process.chdir(REPO);
  process.env.PLATFORM_MUTATION_MODULE = mod.name;
  const { Stryker } = await import('@stryker-mutator/core');
  const { strykerOptions } = require('../stryker-options');
  const incremental = process.env.PLATFORM_MUTATION_INCREMENTAL === '1';
  const results = await new Stryker(
    strykerOptions(mod, {
      incremental,
      force: !incremental,
      interactive: Boolean(process.stdout.isTTY),
    }),
  ).runMutationTest();
  const counts = {};
  for (const { status } of results) counts[status] = (counts[status] ?? 0) + 1;
  fs.writeFileSync(path.join(REPORTS, `${mod.name}.summary.json`), JSON.stringify(counts));
}

function score(counts) {
  let detected = 0;
  let undetected = 0;
  for (const [status, n] of Object.entries(counts)) {
    if (DETECTED.has(status)) detected += n;
    if (UNDETECTED.has(status)) undetected += n;
  }
  const valid = detected + undetected;
  return { detected, valid, score: valid === 0 ? null : (100 * detected) / valid };
}

/** --list: one line per module with its state against the ledger. */
function printList(plan) {
  for (const { mod, files, current, entry } of plan) {
    const state = current ? 'current' : entry ? 'stale' : 'no entry';
    console.log(
      `${mod.name.padEnd(20)} ${state.padEnd(9)} ${String(files.length).padStart(4)} inputs  ${mod.mutate}`,
    );
  }
}

/**
 * A module's tests may load the built server (the client's delivery suite starts one from
 * dist/): bring every build up to date first, as `pnpm build` does in CI (cached when it is).
 */
function buildAll() {
  const build = spawnSync(
    process.execPath,
    [
      require.resolve('turbo/bin/turbo', { paths: [REPO] }),
      'run',
      'build',
      '--output-logs=errors-only',
    ],
    { cwd: REPO, stdio: 'inherit' },
  );
  if (build.status !== 0) {
    console.error('test:mutation: pnpm build failed');
    process.exit(1);
  }
}

/** Rows for the modules not rescored: their ledger entry, or an error when it is not current. */
function ledgerRows(fromLedger) {
  return fromLedger.map((p) => {
    const threshold = p.mod.threshold ?? DEFAULT_THRESHOLD;
    if (!p.current) {
      return { ...p, threshold, error: p.entry ? 'stale ledger entry' : 'no ledger entry' };
    }
    return { ...p, threshold, fromLedger: true, ...p.entry };
  });
}

/**
 * Rescores one module in a child process and returns its row; writes its ledger entry (and
 * records its name in `written`) when the score may become the module's entry.
 */
function rescore(p, { env, incremental, ledger, written }) {
  const { mod } = p;
  const started = Date.now();
  console.log(`\n=== mutation: ${mod.name} (${mod.mutate}, ${p.files.length} inputs)`);
  const summary = path.join(REPORTS, `${mod.name}.summary.json`);
  fs.rmSync(summary, { force: true });
  const child = spawnSync(process.execPath, [__filename, '--run-module', mod.name], {
    cwd: REPO,
    stdio: 'inherit',
    env: { ...env, PLATFORM_MUTATION_INCREMENTAL: incremental ? '1' : '0' },
  });
  fs.rmSync(path.join(REPO, '.stryker-tmp', mod.name), { recursive: true, force: true });
  const seconds = Math.round((Date.now() - started) / 1000);
  const threshold = mod.threshold ?? DEFAULT_THRESHOLD;
  if (child.status !== 0 || !fs.existsSync(summary)) {
    return { ...p, threshold, seconds, error: `stryker exited ${child.status ?? child.signal}` };
  }
  const counts = JSON.parse(fs.readFileSync(summary, 'utf8'));
  const row = { ...p, threshold, seconds, counts, ...score(counts) };
  // A from-scratch score at or above its threshold becomes the module's entry, unless what it
  // was measured on changed while it ran (an edit during a long run): then it stays stale.
  const unchanged = moduleHash(mod, { repo: REPO, tracked: trackedFiles(REPO) }).hash === p.hash;
  if (!unchanged) {
    console.log(
      `test:mutation: ${mod.name}'s inputs changed during its run; its entry is not written`,
    );
  }
  if (!incremental && unchanged && row.score !== null && row.score >= threshold) {
    ledger[mod.name] = {
      hash: p.hash,
      score: Math.round(row.score * 10) / 10,
      detected: row.detected,
      mutants: row.valid,
      minutes: Math.round(seconds / 6) / 10,
    };
    writeLedger(ledger);
    written.push(mod.name);
  }
  return row;
}

/** Prints the score table; returns how many modules failed. */
function printScores(rows, { incremental }) {
  console.log('\nmutation scores (killed + timed out / all but compile errors):');
  let failed = 0;
  for (const row of rows) {
    const name = row.mod.name.padEnd(20);
    if (row.error || row.score === null) {
      failed++;
      console.log(
        `  ${name} FAIL  ${row.error ?? 'no mutant was tested'}${row.seconds === undefined ? '' : ` (${row.seconds} s)`}`,
      );
      continue;
    }
    const ok = row.score >= row.threshold;
    if (!ok) failed++;
    const where = row.fromLedger
      ? `ledger, ${row.minutes} min when measured`
      : `${row.seconds} s${incremental ? ', incremental' : ''}`;
    console.log(
      `  ${name} ${ok ? 'ok  ' : 'FAIL'}  ${row.score.toFixed(1).padStart(5)} %  ` +
        `(${row.detected}/${row.valid ?? row.mutants} detected, threshold ${row.threshold} %, ${where})`,
    );
  }
  return failed;
}

function main() {
  const args = parseArgs(process.argv.slice(2));
  if (args.runModule) {
    runModule(args.runModule).catch((error) => {
      console.error(error);
      process.exit(1);
    });
    return;
  }
  const unknown = [...args.names, ...(args.inputs ? [args.inputs] : [])].filter(
    (name) => !MODULES.some((m) => m.name === name),
  );
  if (unknown.length) usage(`no module ${unknown.join(', ')}`);
  const tracked = trackedFiles(REPO);
  if (args.inputs) {
    for (const file of moduleHash(moduleNamed(args.inputs), { repo: REPO, tracked }).files) {
      console.log(file);
    }
    return;
  }
  const selected = args.names.length ? args.names.map(moduleNamed) : MODULES;
  const ledger = readLedger();
  const plan = planModules(selected, ledger, { repo: REPO, tracked });
  if (args.list) {
    printList(plan);
    return;
  }

  const toRun = plan.filter((p) => args.force || args.incremental || (!args.check && !p.current));
  const fromLedger = plan.filter((p) => !toRun.includes(p));
  const current = plan.filter((p) => p.current).length;
  console.log(
    `test:mutation: ${current} of ${plan.length} modules unchanged since their ledger entry` +
      (toRun.length ? `; rescoring ${toRun.map((p) => p.mod.name).join(', ')}` : ''),
  );
  fs.mkdirSync(REPORTS, { recursive: true });
  if (toRun.length) {
    takeRunLock();
    buildAll();
  }
  // A score is measured on the embedded deployment whatever the shell says (decision 22).
  const env = { ...process.env };
  for (const name of DEPLOYMENT_VARIABLES) delete env[name];

  const rows = ledgerRows(fromLedger);
  const written = [];
  for (const p of toRun) {
    rows.push(rescore(p, { env, incremental: args.incremental, ledger, written }));
  }
  const failed = printScores(rows, args);
  if (written.length) {
    console.log(
      `ledger: rewrote ${written.join(', ')} in tooling/mutation/ledger.json; commit it so that the next run takes them from there`,
    );
  }
  writeTestReport(rows.length - failed, failed);
  console.log(`${rows.length - failed} modules at or above their threshold, ${failed} below`);
  process.exit(failed ? 1 : 0);
}

/** Refuses (exit 2) to rescore beside another run in this checkout: src/run-lock.js. */
function takeRunLock() {
  try {
    acquireRunLock(path.join(REPORTS, 'run.lock'));
  } catch (error) {
    if (error.holder === undefined) throw error;
    console.error(`test:mutation: ${error.message}`);
    process.exit(2);
  }
}

/** Each module counts as one test case in .ci/run's summary (tooling/jest/summary-reporter.js). */
function writeTestReport(passed, failed) {
  const dir = process.env.PLATFORM_TEST_REPORT_DIR;
  if (!dir) return;
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(
    path.join(dir, `mutation-${process.pid}-${Date.now()}.json`),
    JSON.stringify({ package: 'mutation', database: 'stryker', passed, failed }),
  );
}

main();
