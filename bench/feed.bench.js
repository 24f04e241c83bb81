'use strict';
/**
 * The change feed (GET /v1/changes): how fast a client reads a backlog, and how soon a
 * long-polling reader sees a change after it commits.
 *
 * 1. Backlog: BENCH_FEED_EVENTS events (default 100,000) of one organization, written straight
 *    into the outbox with their positions, read from cursor 0 to the head with `limit=1000`, one
 *    read after the other, as `events.follow` does. Goal: >= 20,000 events/s.
 * 2. Latency: a reader long-polls (`wait=30s`) while a writer creates BENCH_FEED_WRITES students
 *    (default 300) at BENCH_FEED_RATE per second (default 20); for each change, the time from its
 *    event's timestamp (taken inside the writing transaction, before COMMIT: an upper bound) to the
 *    reader having it. Goal: p99 < 100 ms. Also shown: from the writer's 201 (after COMMIT: a
 *    lower bound).
 *
 *   pnpm --filter @platform/server build && node bench/feed.bench.js
 *   BENCH_POSTGRES_URL=postgres://…/postgres node bench/feed.bench.js   (PostgreSQL)
 *
 * Loopback only. Writes bench/results/feed.json (feed-postgres.json on PostgreSQL).
 */
require('@platform/hermetic').enforceForRun();
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { configFromEnv, envNumber, percentile } = require('./lib/harness');

const config = configFromEnv(() => ({
  events: envNumber('BENCH_FEED_EVENTS', 100_000, { integer: true }),
  writes: envNumber('BENCH_FEED_WRITES', 300, { integer: true }),
  rate: envNumber('BENCH_FEED_RATE', 20),
  postgres: process.env.BENCH_POSTGRES_URL,
}));
const GOALS = { eventsPerSecond: 20_000, p99Ms: 100 };
const RESULTS_FILE = path.join(
  __dirname,
  'results',
  config.postgres ? 'feed-postgres.json' : 'feed.json',
);
const now = () => performance.now();
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** A student as the API returns it: the size of a typical change's data. */
function studentData(n, at) {
  return JSON.stringify({
    id: `stu_01JBENCH${String(n).padStart(17, '0')}`,
    object: 'student',
    student_number: `F-${n}`,
    first_name: 'Feed',
    last_name: `Reader${n}`,
    email: `feed.reader${n}@school.example`,
    date_of_birth: '2010-04-01',
    grade_level: 7,
    status: 'active',
    external_id: null,
    metadata: {},
    created_at: at,
    updated_at: at,
  });
}

/** The backlog, written as the outbox holds it: positions 1..n, then the organization's head. */
async function seed(server, organizationId) {
  const pg = Boolean(config.postgres);
  const chunk = 500;
  const start = Date.now() - 3_600_000;
  await server.dataSource.transaction(async (manager) => {
    for (let from = 0; from < config.events; from += chunk) {
      const rows = [];
      const values = [];
      for (let n = from; n < Math.min(from + chunk, config.events); n += 1) {
        const at = new Date(start + n);
        const base = values.length;
        rows.push(
          `(${[1, 2, 3, 4, 5, 6, 7, 8].map((k) => (pg ? `$${base + k}` : '?')).join(', ')})`,
        );
        values.push(
          `evt_01JBENCH${String(n).padStart(17, '0')}`,
          organizationId,
          'student.created',
          'v1',
          studentData(n, at.toISOString()),
          pg ? at : at.toISOString().replace('T', ' ').replace('Z', ''),
          pg ? false : 0,
          n + 1,
        );
      }
      await manager.query(
        `INSERT INTO events (id, organization_id, type, api_version, data, created_at, fanout_pending, position) VALUES ${rows.join(', ')}`,
        values,
      );
    }
    await manager.query(
      pg
        ? 'INSERT INTO feed_heads (organization_id, position) VALUES ($1, $2)'
        : 'INSERT INTO feed_heads (organization_id, position) VALUES (?, ?)',
      [organizationId, config.events],
    );
  });
}

async function read(url, token, after, query = '') {
  const res = await fetch(`${url}/v1/changes?after=${after}${query}`, {
    headers: { Authorization: `Bearer ${token}` },
  });
  if (res.status !== 200) throw new Error(`GET /v1/changes: ${res.status} ${await res.text()}`);
  return res.json();
}

async function backlog(server, token) {
  // Warm-up: a few pages, not measured.
  let cursor = '0';
  for (let i = 0; i < 5; i += 1)
    cursor = (await read(server.url, token, cursor, '&limit=1000')).next_cursor;
  cursor = '0';
  let count = 0;
  const t0 = now();
  for (;;) {
    const page = await read(server.url, token, cursor, '&limit=1000');
    count += page.data.length;
    cursor = page.next_cursor;
    if (!page.has_more) break;
  }
  const seconds = (now() - t0) / 1000;
  if (count !== config.events) throw new Error(`read ${count} events, expected ${config.events}`);
  return {
    events: count,
    seconds: Math.round(seconds * 100) / 100,
    eventsPerSecond: Math.round(count / seconds),
    head: cursor,
  };
}

async function latency(server, token, head) {
  const latencies = [];
  /** When the reader had each student's change, and when its writer had the 201 (after COMMIT). */
  const seenAt = new Map();
  const answeredAt = new Map();
  let stop = false;
  const reader = (async () => {
    let cursor = head;
    while (!stop || latencies.length < config.writes) {
      const page = await read(server.url, token, cursor, '&wait=30s&limit=1000');
      const seen = Date.now();
      for (const event of page.data) {
        latencies.push(seen - Date.parse(event.timestamp));
        seenAt.set(event.data.id, seen);
      }
      cursor = page.next_cursor;
      if (stop && latencies.length >= config.writes) break;
    }
  })();
  const headers = { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' };
  const interval = 1000 / config.rate;
  const t0 = now();
  for (let i = 0; i < config.writes; i += 1) {
    const due = t0 + i * interval;
    if (due > now()) await sleep(due - now());
    const res = await fetch(`${server.url}/v1/students`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ student_number: `L-${i}`, first_name: 'Lat', last_name: `Ency${i}` }),
    });
    if (res.status !== 201) throw new Error(`POST /v1/students: ${res.status} ${await res.text()}`);
    answeredAt.set((await res.json()).id, Date.now());
  }
  stop = true;
  await reader;
  const sorted = [...latencies].sort((a, b) => a - b);
  // The reader often has a change before its writer has the 201: those count as 0.
  const afterAnswer = [...answeredAt]
    .map(([id, at]) => Math.max(0, seenAt.get(id) - at))
    .sort((a, b) => a - b);
  return {
    changes: latencies.length,
    p50_ms: percentile(sorted, 50),
    p99_ms: percentile(sorted, 99),
    max_ms: sorted[sorted.length - 1],
    from_writer_response: {
      p50_ms: percentile(afterAnswer, 50),
      p99_ms: percentile(afterAnswer, 99),
    },
  };
}

async function main() {
  const { startTestServer } = require('@platform/server/testing');
  const server = await startTestServer({
    env: { NODE_ENV: 'production' },
    ...(config.postgres && { postgresAdminUrl: config.postgres }),
  });
  let results;
  try {
    const org = await server.createOrganization({
      name: 'Feed',
      plan: 'enterprise',
      rateLimitPerMinute: 10_000_000,
    });
    const { token } = await server.createToken(org.id, ['all']);
    const seeded = now();
    await seed(server, org.id);
    console.log(`Seeded ${config.events} events in ${Math.round(now() - seeded)} ms`);
    // The backlog read ends at the head: the cursor live reading starts from.
    const { head, ...read100k } = await backlog(server, token);
    console.log(
      `Backlog: ${read100k.events} events in ${read100k.seconds} s = ${read100k.eventsPerSecond} events/s (goal >= ${GOALS.eventsPerSecond})`,
    );
    const live = await latency(server, token, head);
    console.log(
      `Commit to long-polling reader: ${live.changes} changes at ${config.rate}/s, from the event's timestamp (before COMMIT): p50 ${live.p50_ms} ms, p99 ${live.p99_ms} ms, max ${live.max_ms} ms (goal p99 < ${GOALS.p99Ms} ms); from the writer's 201 (after COMMIT): p50 ${live.from_writer_response.p50_ms} ms, p99 ${live.from_writer_response.p99_ms} ms`,
    );
    results = {
      database: config.postgres ? 'postgres' : 'sqlite',
      config: { ...config, postgres: Boolean(config.postgres) },
      goals: GOALS,
      backlog: read100k,
      latency: live,
      met: read100k.eventsPerSecond >= GOALS.eventsPerSecond && live.p99_ms < GOALS.p99Ms,
      machine: { cpus: os.cpus().length, node: process.version },
    };
  } finally {
    await server.close();
  }
  fs.mkdirSync(path.dirname(RESULTS_FILE), { recursive: true });
  fs.writeFileSync(RESULTS_FILE, `${JSON.stringify(results, null, 2)}\n`);
  console.log(`Results written to ${path.relative(process.cwd(), RESULTS_FILE)}`);
  if (process.env.BENCH_ENFORCE_GOALS === '1' && !results.met) process.exitCode = 1;
}

main().catch((error) => {
  console.error(`BENCHMARK FAILED: ${error.message}`);
  process.exit(1);
});
