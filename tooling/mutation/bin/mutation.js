#!/usr/bin/env node
// pnpm test:mutation [module…] [--since <git ref>] [--force] [--list]
//
// Runs StrykerJS on each module of ../modules.js (all of them, those named, or those whose
// source or tests changed since a git ref), one Stryker run per module, prints each module's
// mutation score and exits 1 when any is below its threshold or could not be measured.
// Incremental: each module's previous results are kept in reports/mutation/ (not committed), so
// a rerun tests only the mutants whose code or covering tests changed; --force retests all.
'use strict';
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { DEFAULT_THRESHOLD, MODULES, moduleNamed } = require('../modules');

const REPO = path.resolve(__dirname, '../../..');
const REPORTS = path.join(REPO, 'reports/mutation');

/** Mutant states that count: detected (killed, timed out) over detected and undetected. */
const DETECTED = new Set(['Killed', 'Timeout']);
const UNDETECTED = new Set(['Survived', 'NoCoverage']);

function usage(message) {
  if (message) console.error(`test:mutation: ${message}`);
  console.error(
    'usage: pnpm test:mutation [module…] [--since <git ref>] [--force] [--list]\n' +
      `modules: ${MODULES.map((m) => m.name).join(', ')}`,
  );
  process.exit(2);
}

function parseArgs(argv) {
  const args = { names: [], since: undefined, force: false, list: false, runModule: undefined };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--force') args.force = true;
    else if (arg === '--list') args.list = true;
    else if (arg === '--since') args.since = argv[++i] ?? usage('--since needs a git ref');
    else if (arg.startsWith('--since=')) args.since = arg.slice('--since='.length);
    else if (arg === '--run-module') args.runModule = argv[++i];
    else if (arg === '--help' || arg === '-h') usage();
    else if (arg.startsWith('-')) usage(`unknown option ${arg}`);
    else args.names.push(arg);
  }
  return args;
}

function git(...args) {
  const result = spawnSync('git', args, { cwd: REPO, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`git ${args.join(' ')}: ${result.stderr.trim()}`);
  return result.stdout.split('\n').filter(Boolean);
}

/**
 * Modules whose mutated file or tests changed since `ref` (committed or not). A change to this
 * tool or to a package's Jest setup selects every module of that package.
 */
function changedModules(ref) {
  const changed = new Set([
    ...git('diff', '--name-only', `${ref}...HEAD`),
    ...git('diff', '--name-only', 'HEAD'),
    ...git('ls-files', '--others', '--exclude-standard'),
  ]);
  const touches = (file) => changed.has(file);
  const setupChanged = (pkg) =>
    [...changed].some(
      (file) =>
        file.startsWith('tooling/mutation/') ||
        file.startsWith('tooling/jest/') ||
        file === `${pkg}/jest.config.js` ||
        file.startsWith(`${pkg}/test/support/`),
    );
  return MODULES.filter(
    (m) => touches(m.mutate) || m.tests.some(touches) || setupChanged(m.package),
  );
}

/** Child process: one Stryker run for one module; writes its mutant states for the parent. */
async function runModule(name) {
  const mod = moduleNamed(name);
  process.chdir(REPO);
  process.env.PLATFORM_MUTATION_MODULE = mod.name;
  const { Stryker } = await import('@stryker-mutator/core');
  const results = await new Stryker({
    testRunner: 'jest',
    // Stryker looks for plugins beside itself; pnpm keeps them apart, so by path (its ESM entry).
    plugins: [
      path.join(
        path.dirname(require.resolve('@stryker-mutator/jest-runner/package.json')),
        'dist/src/index.js',
      ),
    ],
    jest: {
      projectType: 'custom',
      configFile: 'tooling/mutation/jest.config.js',
      enableFindRelatedTests: false,
    },
    mutate: [mod.mutate],
    // Each mutant runs only the tests that executed its code in the initial run.
    coverageAnalysis: 'perTest',
    incremental: true,
    incrementalFile: `reports/mutation/${mod.name}.incremental.json`,
    force: process.env.PLATFORM_MUTATION_FORCE === '1',
    // Only what the suites load is copied; node_modules are linked.
    ignorePatterns: [
      '/*',
      '!/package.json',
      '!/apps',
      '/apps/*',
      '!/apps/server',
      '!/packages',
      '/packages/*',
      '!/packages/contract',
      '!/packages/client',
      '!/tooling',
      '/tooling/*',
      '!/tooling/mutation',
      '!/conformance',
      'dist',
    ],
    // One per module, removed by the parent: Stryker leaves its sandbox behind.
    tempDirName: `.stryker-tmp/${mod.name}`,
    concurrency: Number(process.env.PLATFORM_MUTATION_CONCURRENCY ?? 2),
    reporters: ['clear-text', 'html', process.stdout.isTTY ? 'progress' : 'dots'],
    clearTextReporter: { allowColor: false, reportTests: false, reportScoreTable: false },
    htmlReporter: { fileName: `reports/mutation/${mod.name}.html` },
    thresholds: { high: 95, low: mod.threshold ?? DEFAULT_THRESHOLD, break: null },
    fileLogLevel: 'off',
    logLevel: process.env.PLATFORM_MUTATION_LOG_LEVEL ?? 'info',
  }).runMutationTest();
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

function main() {
  const args = parseArgs(process.argv.slice(2));
  if (args.runModule) {
    runModule(args.runModule).catch((error) => {
      console.error(error);
      process.exit(1);
    });
    return;
  }
  const unknown = args.names.filter((name) => !MODULES.some((m) => m.name === name));
  if (unknown.length) usage(`no module ${unknown.join(', ')}`);
  let selected = args.names.length ? args.names.map(moduleNamed) : MODULES;
  if (args.since) {
    const changed = new Set(changedModules(args.since));
    selected = selected.filter((m) => changed.has(m));
    console.log(
      `test:mutation: ${selected.length ? selected.map((m) => m.name).join(', ') : 'no module'} changed since ${args.since}`,
    );
  }
  if (args.list) {
    for (const m of selected) console.log(`${m.name.padEnd(20)} ${m.mutate}`);
    return;
  }
  fs.mkdirSync(REPORTS, { recursive: true });

  const rows = [];
  for (const mod of selected) {
    const started = Date.now();
    console.log(`\n=== mutation: ${mod.name} (${mod.mutate})`);
    const summary = path.join(REPORTS, `${mod.name}.summary.json`);
    fs.rmSync(summary, { force: true });
    const child = spawnSync(process.execPath, [__filename, '--run-module', mod.name], {
      cwd: REPO,
      stdio: 'inherit',
      env: { ...process.env, PLATFORM_MUTATION_FORCE: args.force ? '1' : '0' },
    });
    fs.rmSync(path.join(REPO, '.stryker-tmp', mod.name), { recursive: true, force: true });
    const seconds = Math.round((Date.now() - started) / 1000);
    const threshold = mod.threshold ?? DEFAULT_THRESHOLD;
    if (child.status !== 0 || !fs.existsSync(summary)) {
      rows.push({
        mod,
        threshold,
        seconds,
        error: `stryker exited ${child.status ?? child.signal}`,
      });
      continue;
    }
    const counts = JSON.parse(fs.readFileSync(summary, 'utf8'));
    rows.push({ mod, threshold, seconds, counts, ...score(counts) });
  }

  console.log('\nmutation scores (killed + timed out / all but compile errors):');
  let failed = 0;
  for (const row of rows) {
    const name = row.mod.name.padEnd(20);
    if (row.error || row.score === null) {
      failed++;
      console.log(`  ${name} FAIL  ${row.error ?? 'no mutant was tested'} (${row.seconds} s)`);
      continue;
    }
    const ok = row.score >= row.threshold;
    if (!ok) failed++;
    const survived = (row.counts.Survived ?? 0) + (row.counts.NoCoverage ?? 0);
    console.log(
      `  ${name} ${ok ? 'ok  ' : 'FAIL'}  ${row.score.toFixed(1).padStart(5)} %  ` +
        `(${row.detected}/${row.valid} detected, ${survived} survived, threshold ${row.threshold} %, ${row.seconds} s)`,
    );
  }
  writeTestReport(rows.length - failed, failed);
  console.log(`${rows.length - failed} modules at or above their threshold, ${failed} below`);
  process.exit(failed ? 1 : 0);
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
