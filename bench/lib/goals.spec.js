'use strict';
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { goalRows, goalTable, resultsReader } = require('./goals');

// Result files in the shapes the benchmarks write them (only the fields the table reads).
function listResults(value, byCpu, goal) {
  const min = Number(goal.slice(3));
  return {
    ratios: [
      { name: 'server cost, page 300 / page 1', value: 1.2, goal: '<= 1.50', met: true },
      {
        name: 'server / bare throughput, page 1',
        value,
        by_cpu_per_request: byCpu,
        goal,
        met: value >= min,
      },
    ],
  };
}

function sizeRun(database, listRatios, searchP50s, broadStatuses) {
  const lists = ['page 1', 'page 2000', 'page 1 status=active', 'page 2000 status=active'];
  const searches = ['q surname', 'q student number'];
  return {
    database,
    datasets: {
      large: [
        ...lists.map((c) => ({ case: c, p50_ms: 5 })),
        ...searches.map((c, i) => ({ case: c, p50_ms: searchP50s[i] })),
        { case: 'q demo-school (all)', p50_ms: 500, statuses: broadStatuses },
      ],
    },
    ratios: [
      ...lists.map((c, i) => ({ case: c, kind: 'list', ratio_p50: listRatios[i] })),
      ...searches.map((c) => ({ case: c, kind: 'search', ratio_p50: 3 })),
      { case: 'q demo-school (all)', kind: 'worst', ratio_p50: 9 },
    ],
  };
}

function deliveryResults({ perSecond, ratio, p99, bullmq }) {
  return {
    drain: { deliveriesPerSecond: perSecond + 100 },
    throughput: { deliveriesPerSecond: perSecond },
    ratio,
    steady: { commitToReceiptMs: { p99 } },
    goals: {
      deliveriesPerSecond: bullmq ? 2000 : 1000,
      ratioToBare: bullmq ? null : 0.4,
      p99AtRateMs: 250,
    },
  };
}

const run = {
  'students-list.json': listResults(0.44, 0.41, '>= 0.70'),
  'students-list-postgres.json': listResults(0.62, 0.36, '>= 0.60'),
  'collection-size.json': {
    goals: { ratio_p50_max: 1.5, search_p50_ms_max: 50 },
    runs: [
      sizeRun('sqlite', [1.03, 1.08, 0.89, 1.0], [18.3, 16.7], { 200: 10 }),
      sizeRun('postgres', [0.96, 0.87, 0.98, 1.76], [29.3, 61], { 200: 7, 503: 3 }),
    ],
  },
  'delivery-bullmq.json': deliveryResults({ perSecond: 919, ratio: 0.2, p99: 44.8, bullmq: true }),
  'delivery.json': deliveryResults({ perSecond: 1208, ratio: 0.41, p99: 18, bullmq: false }),
  'memory.json': {
    growth: 0.026,
    goal_max_growth: 0.1,
    met: true,
    config: { requests: 100000 },
    rss_mib: { after_warmup: 200, after_load: 205.2 },
  },
  'request-log.json': {
    ratio: 0.86,
    goal_min_ratio: 0.9,
    met: false,
    with_log: { perSecond: 860 },
    without_log: { perSecond: 1000 },
  },
};

const byGoal = (rows) => Object.fromEntries(rows.map((r) => [r.goal, r]));

describe('the goals table at the end of pnpm bench', () => {
  it('reports every goal with its figure, its target and whether it was met', () => {
    const rows = byGoal(goalRows((name) => run[name] ?? null));

    expect(rows['1. server / bare, SQLite page 1']).toMatchObject({
      measured: '0.44 (by CPU 0.41)',
      target: '>= 0.70',
      met: false,
    });
    expect(rows['2. server / node-postgres, page 1']).toMatchObject({
      target: '>= 0.60',
      met: true,
    });
    // One list case over 1.5x fails goal 3 on that database, and names the case.
    expect(rows['3. list p50, 1M / 10k, SQLite']).toMatchObject({ met: true });
    expect(rows['3. list p50, 1M / 10k, PostgreSQL'].met).toBe(false);
    expect(rows['3. list p50, 1M / 10k, PostgreSQL'].measured).toContain(
      '1.76 (page 2000 status=active)',
    );
    expect(rows['3. list p50, 1M / 10k, PostgreSQL'].measured).toContain('3 of 4');
    // Goal 4 is the searches' p50 at a million; the worst case (every row) is not held to it.
    expect(rows['4. q p50 at 1M, SQLite']).toMatchObject({ met: true });
    expect(rows['4. q p50 at 1M, PostgreSQL'].met).toBe(false);
    expect(rows['4. q p50 at 1M, PostgreSQL'].measured).toContain('61.0 ms (q student number)');
    // 4b: the q every row contains must answer 200 within the budget, each time.
    expect(rows['4b. q every row contains, 1M, SQLite']).toMatchObject({
      measured: '10 of 10 answered 200, p50 500.0 ms',
      met: true,
    });
    expect(rows['4b. q every row contains, 1M, PostgreSQL']).toMatchObject({
      measured: '7 of 10 answered 200, p50 500.0 ms',
      met: false,
    });
    // BullMQ is held to deliveries per second, the embedded dispatcher also to the bare loop.
    expect(rows['5. delivery, BullMQ']).toMatchObject({ met: false });
    expect(rows['5. delivery, BullMQ'].measured).toContain('919/s');
    expect(rows['5. delivery, BullMQ'].measured).toContain('backlog 1019/s');
    expect(rows['5. delivery, embedded']).toMatchObject({ met: true });
    expect(rows['5. delivery, embedded'].target).toContain('>= 0.4x');
    expect(rows['6. server RSS growth']).toMatchObject({ target: '<= 10 %', met: true });
    expect(rows['6. server RSS growth'].measured).toContain('2.6 %');
    expect(rows['6. server RSS growth'].measured).toContain('over 100000 requests');
    expect(rows['7. list with / without request log']).toMatchObject({
      measured: '0.86 (860/s vs 1000/s)',
      target: '>= 0.90',
      met: false,
    });
  });

  it('misses the embedded goal on its ratio to the bare loop alone', () => {
    const slow = {
      ...run,
      'delivery.json': deliveryResults({ perSecond: 1500, ratio: 0.3, p99: 10 }),
    };
    const rows = byGoal(goalRows((name) => slow[name] ?? null));
    expect(rows['5. delivery, embedded'].met).toBe(false);
  });

  it('shows a goal whose benchmark gave no result as not measured, and the table marks it "-"', () => {
    const partial = { 'students-list.json': run['students-list.json'] };
    const rows = goalRows((name) => partial[name] ?? null);
    const measured = rows.filter((r) => r.met !== null);
    expect(measured.map((r) => r.goal)).toEqual(['1. server / bare, SQLite page 1']);
    for (const r of rows.filter((x) => x.met === null)) expect(r.measured).toMatch(/^not measured/);

    const table = goalTable(rows).split('\n');
    expect(table).toHaveLength(rows.length + 2);
    expect(table.find((l) => l.includes('1. server / bare'))).toMatch(/\bNO$/);
    expect(table.find((l) => l.includes('6. server RSS growth'))).toMatch(/ -$/);
  });

  it('shows goals 3 and 4 as not measured when a run wrote no list or search case', () => {
    const empty = {
      ...run,
      'collection-size.json': {
        ...run['collection-size.json'],
        runs: [{ database: 'sqlite', ratios: [], datasets: { large: [] } }],
      },
    };
    const rows = byGoal(goalRows((name) => empty[name] ?? null));
    expect(rows['3. list p50, 1M / 10k, SQLite'].met).toBeNull();
    expect(rows['4. q p50 at 1M, SQLite'].met).toBeNull();
    expect(rows['4b. q every row contains, 1M, SQLite'].met).toBeNull();
    expect(rows['1. server / bare, SQLite page 1'].met).toBe(false);
  });
});

describe('which result files the table reads', () => {
  let dir;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-goals-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const write = (name, value, mtimeMs) => {
    const file = path.join(dir, name);
    fs.writeFileSync(file, JSON.stringify(value));
    if (mtimeMs !== undefined) fs.utimesSync(file, mtimeMs / 1000, mtimeMs / 1000);
  };

  it('reads a file written during this run', () => {
    const started = Date.now() - 60_000;
    write('memory.json', run['memory.json']);
    expect(resultsReader(dir, started)('memory.json')).toEqual(run['memory.json']);
  });

  it('never reports an earlier run: a file older than this run is not read', () => {
    const started = Date.now();
    write('memory.json', run['memory.json'], started - 3_600_000);
    const read = resultsReader(dir, started);
    expect(read('memory.json')).toBeNull();
    expect(byGoal(goalRows(read))['6. server RSS growth'].met).toBeNull();
  });

  it('does not read the file of a benchmark that failed in this run, nor a missing one', () => {
    const started = Date.now() - 60_000;
    write('memory.json', run['memory.json']);
    write('delivery.json', run['delivery.json']);
    const read = resultsReader(dir, started, ['memory.json']);
    expect(read('memory.json')).toBeNull();
    expect(read('delivery.json')).toEqual(run['delivery.json']);
    expect(read('students-list.json')).toBeNull();
  });
});
