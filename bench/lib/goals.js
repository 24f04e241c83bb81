'use strict';
/**
 * Issue 17's goals, as one table at the end of `pnpm bench` (run-all.js): each goal's figure
 * from the result file its benchmark wrote in this run, its target, and whether it was met.
 *
 * `read(name)` gives a result file of `bench/results/` parsed, or null when this run did not
 * write it or its benchmark failed (`resultsReader`). Such a goal is reported as not measured,
 * never with the figure of an earlier run. The targets come from the
 * files too (each benchmark writes its goals beside its figures), so they are stated once.
 */

const fs = require('node:fs');
const path = require('node:path');

const fixed = (value, digits) => (Number.isFinite(value) ? value.toFixed(digits) : '-');

/** A row: what was measured, the goal, and met (true, false, or null: not measured). */
function row(goal, measured, target, met) {
  return { goal, measured, target, met };
}

function notMeasured(goal, why) {
  return row(goal, `not measured (${why})`, '', null);
}

/** Goals 1 and 2: the list benchmark's server / bare (or `name`) ratio on page 1. */
function listRatio(goal, results, why, name = 'server / bare throughput, page 1') {
  const ratio = results?.ratios?.find((r) => r.name === name);
  if (!ratio) return notMeasured(goal, why);
  return row(
    goal,
    `${fixed(ratio.value, 2)} (by CPU ${fixed(ratio.by_cpu_per_request, 2)})`,
    ratio.goal,
    ratio.met,
  );
}

/** Goals 3 and 4 on one database: the list cases' 1M / 10k ratios, the searches at 1M. */
function collectionSize(results, database) {
  const label = database === 'sqlite' ? 'SQLite' : 'PostgreSQL';
  const goal3 = `3. list p50, 1M / 10k, ${label}`;
  const goal4 = `4. q p50 at 1M, ${label}`;
  const goal4b = `4b. q every row contains, 1M, ${label}`;
  const run = results?.runs?.find((r) => r.database === database);
  if (!run || !results.goals) {
    const why = 'no result from collection-size.bench.js on it in this run';
    return [notMeasured(goal3, why), notMeasured(goal4, why), notMeasured(goal4b, why)];
  }
  const { ratio_p50_max: ratioMax, search_p50_ms_max: searchMaxMs } = results.goals;
  const lists = run.ratios.filter((r) => r.kind === 'list');
  if (lists.length === 0 || !run.ratios.some((r) => r.kind === 'search')) {
    const why = 'collection-size.bench.js wrote no list or search case';
    return [notMeasured(goal3, why), notMeasured(goal4, why), notMeasured(goal4b, why)];
  }
  // The worst case, every row a match: held to answering within the search budget, not to a p50.
  const broad = run.ratios
    .filter((r) => r.kind === 'worst')
    .map((r) => run.datasets.large.find((c) => c.case === r.case))[0];
  const answered = broad && Object.values(broad.statuses ?? {}).reduce((n, k) => n + k, 0);
  const ok = broad?.statuses?.[200] ?? 0;
  const worst = lists.reduce((a, b) => (b.ratio_p50 > a.ratio_p50 ? b : a));
  const searches = run.ratios
    .filter((r) => r.kind === 'search')
    .map((r) => ({ ...r, p50: run.datasets.large.find((c) => c.case === r.case).p50_ms }));
  const slowest = searches.reduce((a, b) => (b.p50 > a.p50 ? b : a));
  return [
    row(
      goal3,
      `worst ${fixed(worst.ratio_p50, 2)} (${worst.case}); ${lists.filter((r) => r.ratio_p50 <= ratioMax).length} of ${lists.length} cases met`,
      `<= ${fixed(ratioMax, 2)} each`,
      lists.every((r) => r.ratio_p50 <= ratioMax),
    ),
    row(
      goal4,
      `slowest ${fixed(slowest.p50, 1)} ms (${slowest.case})`,
      `< ${searchMaxMs} ms each`,
      searches.every((r) => r.p50 < searchMaxMs),
    ),
    broad
      ? row(
          goal4b,
          `${ok} of ${answered} answered 200, p50 ${fixed(broad.p50_ms, 1)} ms`,
          '200 within the budget, each',
          ok === answered && answered > 0,
        )
      : notMeasured(goal4b, 'collection-size.bench.js wrote no worst case'),
  ];
}

/** Goal 5 on one backend: deliveries per second, the ratio to the bare loop, p99 at a steady rate. */
function delivery(results, label, file) {
  const goal = `5. delivery, ${label}`;
  if (!results) return notMeasured(goal, `no result from ${file} in this run`);
  const { goals } = results;
  const perSecond = results.throughput.deliveriesPerSecond;
  const p99 = results.steady.commitToReceiptMs.p99;
  const parts = [`${perSecond}/s`];
  const targets = [`>= ${goals.deliveriesPerSecond}/s`];
  let met = perSecond >= goals.deliveriesPerSecond && p99 < goals.p99AtRateMs;
  if (goals.ratioToBare !== null) {
    parts.push(`${fixed(results.ratio, 2)}x bare`);
    targets.push(`>= ${goals.ratioToBare}x`);
    met = met && results.ratio >= goals.ratioToBare;
  }
  parts.push(`p99 ${p99} ms`);
  // The dispatcher alone on a backlog (BENCH_DRAIN=0 skips it): shown, not held to the goal.
  if (results.drain) parts.push(`backlog ${results.drain.deliveriesPerSecond}/s`);
  targets.push(`p99 < ${goals.p99AtRateMs} ms`);
  return row(goal, parts.join(', '), targets.join(', '), met);
}

/** Goal 6: the server's RSS growth from after the warm-up to after the load. */
function memory(results) {
  const goal = '6. server RSS growth';
  if (!results) return notMeasured(goal, 'no result from memory.bench.js in this run');
  return row(
    goal,
    `${fixed(results.growth * 100, 1)} % (${fixed(results.rss_mib.after_warmup, 0)} -> ${fixed(results.rss_mib.after_load, 0)} MiB over ${results.config.requests} requests)`,
    `<= ${fixed(results.goal_max_growth * 100, 0)} %`,
    results.met,
  );
}

/** Goal 7 (issue 34): the students list's throughput with the request log over without. */
function requestLog(results) {
  const goal = '7. list with / without request log';
  if (!results) return notMeasured(goal, 'no result from request-log.bench.js in this run');
  return row(
    goal,
    `${fixed(results.ratio, 2)} (${results.with_log.perSecond}/s vs ${results.without_log.perSecond}/s)`,
    `>= ${fixed(results.goal_min_ratio, 2)}`,
    results.met,
  );
}

/** Every goal of issues 17 and 34, in its order. */
function goalRows(read) {
  const sizes = read('collection-size.json');
  const [sqliteSize, sqliteSearch, sqliteBroad] = collectionSize(sizes, 'sqlite');
  const [postgresSize, postgresSearch, postgresBroad] = collectionSize(sizes, 'postgres');
  return [
    listRatio(
      '1. server / bare, SQLite page 1',
      read('students-list.json'),
      'no result from students-list.bench.js in this run',
    ),
    listRatio(
      '1b. server / NestJS + TypeORM peer, SQLite page 1',
      read('students-list.json'),
      'no peer in students-list.bench.js in this run',
      'server / NestJS + TypeORM peer throughput, page 1',
    ),
    listRatio(
      '2. server / node-postgres, page 1',
      read('students-list-postgres.json'),
      'no result from students-list.bench.js on PostgreSQL in this run',
    ),
    sqliteSize,
    postgresSize,
    sqliteSearch,
    postgresSearch,
    sqliteBroad,
    postgresBroad,
    delivery(read('delivery-bullmq.json'), 'BullMQ', 'the BullMQ run of scale-out.bench.js'),
    delivery(read('delivery.json'), 'embedded', 'delivery.bench.js'),
    memory(read('memory.json')),
    requestLog(read('request-log.json')),
  ];
}

/** The rows as the text table the run ends with. */
function goalTable(rows) {
  const cells = rows.map((r) => [
    r.goal,
    r.measured,
    r.target,
    r.met === null ? '-' : r.met ? 'yes' : 'NO',
  ]);
  const header = ['goal', 'measured', 'target', 'met'];
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i].length)));
  const line = (c) => `  ${c.map((cell, i) => cell.padEnd(widths[i])).join('   ')}`.trimEnd();
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...cells.map(line)].join('\n');
}

/**
 * `read` for goalRows: a result file of `dir`, parsed, or null if it is missing, unreadable,
 * older than `sinceMs` (written by an earlier run), or named in `untrusted` (written by a
 * benchmark that then failed: one that exits 1 has found its own figures untrustworthy).
 */
function resultsReader(dir, sinceMs, untrusted = []) {
  return (name) => {
    if (untrusted.includes(name)) return null;
    const file = path.join(dir, name);
    try {
      if (fs.statSync(file).mtimeMs < sinceMs) return null;
      return JSON.parse(fs.readFileSync(file, 'utf8'));
    } catch {
      return null;
    }
  };
}

module.exports = { goalRows, goalTable, resultsReader };
