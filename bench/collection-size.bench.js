'use strict';
/**
 * Collection size benchmark (issue 17 goals 3 and 4): what a list page, a filtered page and a `q`
 * search cost at 10,000 students and at 1,000,000 (plus a second organization of 10,000), on the
 * real server, SQLite and (with BENCH_POSTGRES_URL) PostgreSQL. See README.md.
 *
 *   pnpm --filter @platform/server build && pnpm exec node bench/collection-size.bench.js
 *   BENCH_POSTGRES_URL=postgres://platform:platform@127.0.0.1:55432/postgres pnpm exec node bench/collection-size.bench.js
 *
 * Knobs: BENCH_LARGE (default 1000000), BENCH_SMALL (default 10000), BENCH_SCHOOL (a small
 * school searched in both datasets, default 2000), BENCH_REQUESTS (sequential
 * requests per case, default 100, after BENCH_WARMUP, default 20), BENCH_ROUNDS (rounds per case
 * alternating the 10k and 1M servers, default 10), BENCH_DATABASES (sqlite,postgres).
 */
// Loopback only: this run and every process it starts refuse any other address (tooling/hermetic).
require('@platform/hermetic').enforceForRun();
const { spawn } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const pg = require('pg');
const {
  REPO_ROOT,
  SERVER_MAIN,
  CLI_MAIN,
  cli,
  freePort,
  waitReady,
  requests,
  sequential,
  summarize,
  writeResults,
  configFromEnv,
  envNumber,
  serverNodeFlags,
} = require('./lib/harness');
const { seedPostgres, seedSqlite } = require('./collection-size-seed');

const RESULTS_FILE = path.join(__dirname, 'results', 'collection-size.json');

const config = configFromEnv(() => ({
  large: envNumber('BENCH_LARGE', 1_000_000),
  small: envNumber('BENCH_SMALL', 10_000),
  // A third organization, the same size in both datasets: a small school's search in a big table.
  school: envNumber('BENCH_SCHOOL', 2_000),
  requests: envNumber('BENCH_REQUESTS', 100),
  warmup: envNumber('BENCH_WARMUP', 20),
  // The worst-case search reads every row: fewer requests keep the run short.
  worstRequests: envNumber('BENCH_WORST_REQUESTS', 10),
  // Each case's requests are split into this many rounds, alternating the 10k and 1M servers.
  rounds: envNumber('BENCH_ROUNDS', 10),
}));
const POSTGRES_URL = process.env.BENCH_POSTGRES_URL || '';
const DATABASES = (process.env.BENCH_DATABASES || 'sqlite,postgres')
  .split(',')
  .filter((d) => d === 'sqlite' || (d === 'postgres' && POSTGRES_URL));
const RATE_LIMIT = 1_000_000;
const RATIO_GOAL = 1.5;
const SEARCH_GOAL_MS = 50;

/**
 * Each case, as the big organization's token asks it (`school`: the small school's);
 * `expect` is the page size it should get,
 * `total` (of the dataset's size) the exact `meta.total` the tallies must give.
 */
const all = (size) => size;
// Row n is active when n % 4 === 0 (STATUSES cycles).
const active = (size) => Math.floor(size / 4);
const CASES = [
  { name: 'page 1', query: 'per_page=5', expect: 5, total: all },
  { name: 'page 2000', query: 'per_page=5&page=2000', expect: 5, total: all },
  { name: 'page 1 status=active', query: 'per_page=5&status=active', expect: 5, total: active },
  // A quarter of the students are active: at 10,000 that is 2,500, so page 2,000 is past the end.
  {
    name: 'page 2000 status=active',
    query: 'per_page=5&page=2000&status=active',
    expect: { small: 0, large: 5 },
    total: active,
  },
  // The same deep pages as a walk reaches them: the cursor of the page before's links.next.
  {
    name: 'cursor page 2000',
    query: 'per_page=5&cursor=(links.next of page 1999)',
    cursorAfter: 'per_page=5&page=1999',
    expect: 5,
    total: all,
  },
  {
    name: 'cursor page 500 active',
    query: 'per_page=5&status=active&cursor=(links.next of page 499)',
    cursorAfter: 'per_page=5&status=active&page=499',
    expect: 5,
    total: active,
  },
  { name: 'q surname', query: 'per_page=5&q=nakamura', expect: 5, search: true },
  { name: 'q student number', query: 'per_page=5&q=S0004321', expect: 1, search: true },
  { name: 'q demo-school (all)', query: 'per_page=5&q=demo-school', expect: 5, worst: true },
  // Every row's email has the domain; a grade keeps 1 row in 13 (7.7 %), so the page's bound of
  // 300 needs a walk of some 3,900 rows. Past the walk, a trigram bitmap of every row.
  {
    name: 'q demo-school grade 1',
    query: 'per_page=100&q=demo-school&grade_level=1',
    expect: 100,
    search: true,
  },
  // The small school's own token: its search should not cost more in a bigger table.
  {
    name: 'school q surname',
    query: 'per_page=5&q=nakamura',
    expect: 5,
    search: true,
    school: true,
  },
  {
    name: 'school q number',
    query: 'per_page=5&q=S0001234',
    expect: 1,
    search: true,
    school: true,
  },
];

const log = (message = '') => process.stdout.write(`${message}\n`);

async function adminQuery(text) {
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

let tmpDir;
let servers = [];
let pgDatabases = [];
function stopServers() {
  for (const server of servers) if (server.exitCode === null) server.kill('SIGKILL');
  servers = [];
}
async function cleanup() {
  stopServers();
  if (tmpDir) fs.rmSync(tmpDir, { recursive: true, force: true });
  tmpDir = undefined;
  const names = pgDatabases;
  pgDatabases = [];
  for (const name of names)
    await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch((e) =>
      log(`could not drop ${name}: ${e.message}`),
    );
}
for (const signal of ['SIGINT', 'SIGTERM'])
  process.on(signal, () => cleanup().finally(() => process.exit(130)));

async function startServer(databaseUrl) {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const server = spawn(process.execPath, [...serverNodeFlags(), SERVER_MAIN], {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      // PostgreSQL requires the key that seals webhook secrets; none are stored in this run.
      WEBHOOK_SECRETS_KEY: crypto.randomBytes(32).toString('base64'),
      HOST: '127.0.0.1',
      PORT: String(port),
      NODE_ENV: 'production',
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  servers.push(server);
  await waitReady(base);
  return base;
}

/** links.next of a page: the URL of the page after it, through its cursor. */
async function nextLink(base, query, token) {
  const res = await fetch(`${base}/v1/students?${query}`, {
    headers: { authorization: `Bearer ${token}` },
  });
  const next = (await res.json())?.links?.next;
  if (res.status !== 200 || typeof next !== 'string' || !next.includes('cursor='))
    throw new Error(`${query}: no cursor in links.next (status ${res.status})`);
  return next;
}

/**
 * Each case on both servers (`bases.small`: 10,000 students; `bases.large`: 1,000,000), its
 * requests split into `config.rounds` rounds that alternate between the two (and which goes
 * first), so a change in the machine's load between them hits both datasets alike: the ratio
 * compares the datasets, not two moments of a shared machine.
 */
async function measurePair(bases, tokens) {
  const results = { small: [], large: [] };
  const datasets = ['small', 'large'];
  for (const c of CASES) {
    const n = c.worst ? config.worstRequests : config.requests;
    const token = c.school ? tokens.school : tokens.big;
    const rounds = Math.min(config.rounds, n);
    const cursors = {};
    if (c.cursorAfter)
      for (const d of datasets) cursors[d] = await nextLink(bases[d], c.cursorAfter, token);
    const url = (d) => cursors[d] ?? `${bases[d]}/v1/students?${c.query}`;
    for (const d of datasets)
      await sequential(url(d), token, c.worst ? Math.min(3, config.warmup) : config.warmup);
    const got = Object.fromEntries(
      datasets.map((d) => [d, { latencies: [], statuses: {}, firstBody: undefined }]),
    );
    for (let r = 0; r < rounds; r++) {
      const share = Math.floor(n / rounds) + (r < n % rounds ? 1 : 0);
      for (const d of r % 2 ? [...datasets].reverse() : datasets) {
        const part = await requests(url(d), token, share);
        got[d].latencies.push(...part.latencies);
        for (const [status, k] of Object.entries(part.statuses))
          got[d].statuses[status] = (got[d].statuses[status] ?? 0) + k;
        got[d].firstBody ??= part.firstBody;
      }
    }
    for (const d of datasets) {
      const label = d === 'small' ? '10k' : '1M';
      const r = { ...summarize(got[d].latencies), statuses: got[d].statuses };
      const body = JSON.parse(got[d].firstBody);
      const expected = typeof c.expect === 'number' ? c.expect : c.expect[d];
      const total = c.total?.(config[d]);
      const ok =
        r.statuses[200] === n &&
        body.data?.length === expected &&
        (total === undefined || (body.meta.total === total && body.meta.total_exact === true));
      // A search past its budget answers 503 (search_timeout): a result to report, not a failure.
      const timedOut =
        (c.search || c.worst) && Object.keys(r.statuses).every((s) => s === '200' || s === '503');
      if (!ok && !timedOut)
        throw new Error(
          `${label} ${c.name}: statuses ${JSON.stringify(r.statuses)}, ${body.data?.length} rows (expected ${expected}), ` +
            `meta.total ${body.meta?.total} exact ${body.meta?.total_exact} (expected ${total ?? 'any'})`,
        );
      const row = {
        case: c.name,
        query: c.query,
        n: r.n,
        p50_ms: r.p50_ms,
        p99_ms: r.p99_ms,
        statuses: r.statuses,
        rows: body.data?.length ?? null,
        total: body.meta?.total ?? null,
        total_exact: body.meta?.total_exact ?? null,
        code: body.code ?? null,
      };
      results[d].push(row);
      log(
        `  ${label.padEnd(6)} ${c.name.padEnd(24)} p50 ${r.p50_ms.toFixed(1).padStart(7)} ms  p99 ${r.p99_ms
          .toFixed(1)
          .padStart(7)} ms  total ${String(row.total ?? '-').padStart(7)} exact ${String(
          row.total_exact ?? '-',
        ).padEnd(5)} ${JSON.stringify(r.statuses)}${row.code ? ` ${row.code}` : ''}`,
      );
    }
  }
  return results;
}

/**
 * The database to seed: its URL, a `seed(ranges)` for it, and `copy()`, which copies it as it is
 * and returns the copy's URL.
 */
async function prepareDatabase(kind) {
  let url;
  let seed;
  let copy;
  if (kind === 'sqlite') {
    tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'platform-size-bench-'));
    const file = path.join(tmpDir, 'bench.sqlite');
    url = `sqlite:${file}`;
    seed = (...args) => seedSqlite(file, ...args);
    copy = async () => {
      const small = path.join(tmpDir, 'bench-10k.sqlite');
      // The seed's connection closed last, so WAL was checkpointed into the file: it is whole.
      fs.copyFileSync(file, small);
      return `sqlite:${small}`;
    };
  } else {
    const name = `bench_size_${process.pid}`;
    pgDatabases.push(name);
    await adminQuery(`CREATE DATABASE ${name}`);
    const u = new URL(POSTGRES_URL);
    u.pathname = `/${name}`;
    url = u.toString();
    seed = (...args) => seedPostgres(url, ...args);
    copy = async () => {
      const small = `${name}_10k`;
      pgDatabases.push(small);
      // Nobody is connected to the seeded database now, as a template requires.
      await adminQuery(`CREATE DATABASE ${small} TEMPLATE ${name}`);
      const v = new URL(POSTGRES_URL);
      v.pathname = `/${small}`;
      return v.toString();
    };
  }
  return { url, seed, copy };
}

/** A seed's step timings, for the log: `insert 1.23 (cpu 1.10), …`. */
function seedSteps(timed) {
  return Object.entries(timed.steps)
    .map(([name, s]) => {
      const cpu = timed.cpu?.[name];
      return `${name} ${s.toFixed(2)}${cpu === undefined ? '' : ` (cpu ${cpu.toFixed(2)})`}`;
    })
    .join(', ');
}

/**
 * Both datasets from one database: 10,000 in the big organization, copied (the SQLite file; on
 * PostgreSQL a database made from it as a template), then grown to 1,000,000; a server on each,
 * measured side by side (measurePair).
 */
async function runDatabase(kind) {
  const { url, seed, copy } = await prepareDatabase(kind);
  cli(url, ['migrate']);
  const org = (name) =>
    cli(url, [
      'orgs:create',
      '--name',
      name,
      '--plan',
      'enterprise',
      '--rate-limit',
      String(RATE_LIMIT),
    ]);
  const big = org('Big District');
  const school = org('Small School');
  const tokenOf = (organization) =>
    cli(url, [
      'tokens:create',
      '--org',
      organization.id,
      '--name',
      'bench',
      '--scopes',
      'students:read',
    ]).token;
  const tokens = { big: tokenOf(big), school: tokenOf(school) };

  const out = { database: kind, datasets: {} };
  let started = Date.now();
  out.seed_small_steps = await seed([
    { orgTag: '1', orgId: big.id, from: 1, to: config.small },
    { orgTag: '3', orgId: school.id, from: 1, to: config.school },
  ]);
  out.seed_small_seconds = (Date.now() - started) / 1000;
  log(
    `${kind}: seeded ${config.small} students (+ ${config.school} in a small school) in ${out.seed_small_seconds.toFixed(1)} s`,
  );
  log(`  seed steps (s): ${seedSteps(out.seed_small_steps)}`);
  const smallUrl = await copy();

  started = Date.now();
  const second = org('Second School');
  out.seed_large_steps = await seed([
    { orgTag: '1', orgId: big.id, from: config.small + 1, to: config.large },
    { orgTag: '2', orgId: second.id, from: 1, to: config.small },
  ]);
  out.seed_large_seconds = (Date.now() - started) / 1000;
  log(
    `${kind}: grew to ${config.large} students (+ ${config.small} in a second organization) in ${out.seed_large_seconds.toFixed(1)} s`,
  );
  log(`  seed steps (s): ${seedSteps(out.seed_large_steps)}`);
  const bases = { small: await startServer(smallUrl), large: await startServer(url) };
  Object.assign(out.datasets, await measurePair(bases, tokens));
  stopServers();
  await cleanup();

  out.ratios = out.datasets.small.map((s, i) => {
    const l = out.datasets.large[i];
    const { search, worst } = CASES[i];
    // What the case is held to (bench/lib/goals.js reads it): a list's ratio, a search's ratio
    // and its p50 at the larger size, or (the worst case) answering 200 within the budget.
    const kind = worst ? 'worst' : search ? 'search' : 'list';
    return { case: s.case, kind, ratio_p50: l.p50_ms / s.p50_ms, ratio_p99: l.p99_ms / s.p99_ms };
  });
  return out;
}

function report(out) {
  log();
  log(
    `${out.database}: 1M / 10k (goal: p50 ratio <= ${RATIO_GOAL}; q p50 at 1M < ${SEARCH_GOAL_MS} ms)`,
  );
  log(
    `  ${'case'.padEnd(24)} ${'10k p50'.padStart(8)} ${'1M p50'.padStart(8)} ${'10k p99'.padStart(8)} ${'1M p99'.padStart(8)}  ratio p50  goal`,
  );
  out.ratios.forEach((r, i) => {
    const s = out.datasets.small[i];
    const l = out.datasets.large[i];
    const c = CASES[i];
    let goal;
    if (c.worst) goal = `${l.statuses[200] === l.n ? 'ok' : 'MISS'} 200 within the budget`;
    else if (c.search)
      goal = `${r.ratio_p50 <= RATIO_GOAL ? 'ok' : 'MISS'} ratio, ${l.p50_ms < SEARCH_GOAL_MS ? 'ok' : 'MISS'} <50ms`;
    else goal = r.ratio_p50 <= RATIO_GOAL ? 'ok' : 'MISS';
    log(
      `  ${r.case.padEnd(24)} ${s.p50_ms.toFixed(1).padStart(8)} ${l.p50_ms.toFixed(1).padStart(8)} ${s.p99_ms
        .toFixed(1)
        .padStart(
          8,
        )} ${l.p99_ms.toFixed(1).padStart(8)}  ${r.ratio_p50.toFixed(2).padStart(9)}  ${goal}`,
    );
  });
}

async function main() {
  for (const file of [SERVER_MAIN, CLI_MAIN])
    if (!fs.existsSync(file))
      throw new Error(`${file} is missing: pnpm --filter @platform/server build`);
  if (!POSTGRES_URL) log('BENCH_POSTGRES_URL is not set: SQLite only.');
  const runs = [];
  for (const kind of DATABASES) {
    const out = await runDatabase(kind);
    report(out);
    runs.push(out);
  }
  const written = writeResults(RESULTS_FILE, 'collection-size', {
    config,
    goals: { ratio_p50_max: RATIO_GOAL, search_p50_ms_max: SEARCH_GOAL_MS },
    runs,
  });
  log();
  log(`Results written to ${written}`);
}

if (require.main === module)
  main()
    .then(async () => {
      await cleanup();
      process.exit(0);
    })
    .catch(async (error) => {
      log(`BENCHMARK FAILED: ${error.message}`);
      await cleanup();
      process.exit(1);
    });

// For profiling a seeded database by hand (EXPLAIN): the seeders, without running the bench.
module.exports = { seedSqlite, seedPostgres };
