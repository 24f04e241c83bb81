'use strict';
/**
 * The request path's regression gate, run by .ci/run: the students list (page 1, SQLite), webhook
 * delivery (embedded) and 1,000-item batch upserts (SQLite) for a few seconds each, every figure a
 * ratio against the bare baseline of the same run, and the portal's first-load bytes
 * (portal.bench.js, one round in Chromium) against its 150 KiB goal, judged against the floors in
 * floors.json (lib/gate.js). Exits 1 when a ratio fell more than its margin below its floor, so a
 * feature that slows the request path fails CI instead of shipping. README.md says how to move a
 * floor.
 *
 *   node bench/gate.js        (after `pnpm --filter @platform/server... build`)
 */
require('@platform/hermetic').enforceForRun();
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { format, judge } = require('./lib/gate');

const RESULTS = path.join(__dirname, 'results');
/** Short runs: long enough for the JIT to settle and the ratio to hold, a few seconds a case. */
const RUNS = [
  {
    script: 'students-list.bench.js',
    env: { BENCH_DURATION: '3', BENCH_WARMUP: '1', BENCH_WARMUP_REQUESTS: '2000', BENCH_PEER: '0' },
  },
  {
    script: 'delivery.bench.js',
    env: { BENCH_EVENTS: '2000', BENCH_DRAIN: '0', BENCH_LATENCY_SECONDS: '2' },
  },
  // Batch upserts against the bare INSERT … ON CONFLICT (issue 45), twelve rounds, on SQLite.
  { script: 'batch-upsert.bench.js', env: { BENCH_ROUNDS: '12', BENCH_POSTGRES_URL: '' } },
  // The portal's first load in Chromium (issue 48), one round: bytes, not speed, are gated.
  { script: 'portal.bench.js', env: { BENCH_ROUNDS: '1' } },
];

function run({ script, env }) {
  const started = Date.now();
  const child = spawnSync(process.execPath, [path.join(__dirname, script)], {
    env: { ...process.env, ...env, BENCH_ENFORCE_GOALS: '0' },
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  const seconds = ((Date.now() - started) / 1000).toFixed(0);
  if (child.status !== 0) {
    process.stdout.write(child.stdout + child.stderr);
    throw new Error(`${script} failed (exit ${child.status ?? child.signal}) after ${seconds} s`);
  }
  console.log(`${script}: ${seconds} s`);
}

const readJson = (file) => JSON.parse(fs.readFileSync(path.join(RESULTS, file), 'utf8'));

function measured() {
  const list = readJson('students-list.json').ratios[0];
  const delivery = readJson('delivery.json');
  const portal = readJson('portal.json');
  const batch = readJson('batch-upsert.json');
  return {
    list_page1: list?.value,
    list_page1_cpu: list?.by_cpu_per_request,
    delivery: delivery.ratio,
    batch_upsert: batch.ratio,
    // The goal over what the first page (tokens, cold) transferred: below 1 is over 150 KiB.
    portal_first_load: portal.goal_first_load_kib / portal.tokens_cold.portal_kib,
  };
}

/** Each gated ratio is one case of CI's summary (scripts/sum-test-reports.js). */
function report(rows) {
  const dir = process.env.PLATFORM_TEST_REPORT_DIR;
  if (!dir) return;
  fs.mkdirSync(dir, { recursive: true });
  const passed = rows.filter((r) => r.ok).length;
  fs.writeFileSync(
    path.join(dir, `bench-gate-${process.pid}.json`),
    JSON.stringify({ package: 'bench', database: 'gate', passed, failed: rows.length - passed }),
  );
}

function main() {
  const floors = JSON.parse(fs.readFileSync(path.join(__dirname, 'floors.json'), 'utf8')).floors;
  for (const file of ['students-list.json', 'delivery.json', 'batch-upsert.json', 'portal.json'])
    fs.rmSync(path.join(RESULTS, file), { force: true });
  for (const r of RUNS) run(r);
  const rows = judge(floors, measured());
  console.log(
    `\nRegression gate (ratios against the bare baseline of the same run)\n${format(rows)}`,
  );
  report(rows);
  if (rows.some((r) => !r.ok)) {
    console.log(
      '\nA ratio fell below its floor less its margin: the request path got slower. Profile it ' +
        '(bench/README.md) and fix it; move a floor only with the reason in the commit.',
    );
    process.exitCode = 1;
  }
}

try {
  main();
} catch (error) {
  console.error(`GATE FAILED: ${error.message}`);
  process.exitCode = 2;
}
