'use strict';
/**
 * Import benchmark (issue 45): the real server takes a `full` import of BENCH_ROWS students
 * (default 1,000,000) as one NDJSON file, streamed from disk, into an empty organization: the
 * upload (rows staged before the 202), then the background run, a batch upsert per 1,000 rows,
 * and the withdrawal pass. Reports rows per second of each part and of the whole, and how much
 * the server's resident set grows meanwhile. Goal: it finishes, with every row created, and the
 * resident set grows by less than 128 MB.
 *
 *   pnpm --filter @platform/server build && node bench/import.bench.js
 *   BENCH_DATABASE=postgres BENCH_POSTGRES_URL=postgres://… node bench/import.bench.js
 */
// Loopback only: this run and every process it starts refuse any other address (tooling/hermetic).
require('@platform/hermetic').enforceForRun();
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { envNumber, freePort, waitReady, writeResults } = require('./lib/harness');
const { database, rssMb, runCli, startServer } = require('./lib/server-process');

const ROWS = envNumber('BENCH_ROWS', 1_000_000, { integer: true });
const DIALECT = process.env.BENCH_DATABASE === 'postgres' ? 'postgres' : 'sqlite';
const GOALS = { rssGrowthMb: 128 };
const log = (line) => console.log(line);

/** The file: ROWS students, each with its SIS key, written in 1 MiB pieces. */
function writeFile(file) {
  const fd = fs.openSync(file, 'w');
  let pending = '';
  for (let n = 0; n < ROWS; n += 1) {
    pending += `${JSON.stringify({
      external_id: `SIS-${n}`,
      student_number: `N-${n}`,
      first_name: 'Import',
      last_name: `Row ${n}`,
      grade_level: n % 12,
    })}\n`;
    if (pending.length >= 1 << 20) {
      fs.writeSync(fd, pending);
      pending = '';
    }
  }
  fs.writeSync(fd, pending);
  fs.closeSync(fd);
  return fs.statSync(file).size;
}

async function main() {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-import-'));
  const db = await database(tmp, DIALECT, 'bench_import');
  let server;
  try {
    const file = path.join(tmp, 'students.ndjson');
    const bytes = writeFile(file);
    log(`${ROWS} rows, ${(bytes / 1024 / 1024).toFixed(1)} MB (${DIALECT})`);
    const seeded = runCli(db.env, ['seed', '--students', '1', '--rate-limit', '1000000']);
    const port = await freePort();
    server = startServer(db, port);
    const base = `http://127.0.0.1:${port}`;
    await waitReady(base);
    const headers = { Authorization: `Bearer ${seeded.token}` };

    const rssBefore = rssMb(server.pid);
    let rssPeak = rssBefore;
    const sampler = setInterval(() => {
      rssPeak = Math.max(rssPeak, rssMb(server.pid));
    }, 50);
    const form = new FormData();
    form.append('file', await fs.openAsBlob(file, { type: 'application/x-ndjson' }), 'sis.ndjson');
    const started = performance.now();
    const res = await fetch(`${base}/v1/imports?collection=students&mode=full&confirm=true`, {
      method: 'POST',
      headers,
      body: form,
    });
    const created = await res.json();
    if (res.status !== 202) throw new Error(`upload: ${res.status} ${JSON.stringify(created)}`);
    const uploadSeconds = (performance.now() - started) / 1000;
    let done;
    for (;;) {
      done = await (await fetch(`${base}/v1/imports/${created.id}`, { headers })).json();
      if (done.status !== 'queued' && done.status !== 'running') break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const seconds = (performance.now() - started) / 1000;
    clearInterval(sampler);
    if (done.status !== 'succeeded' || done.counts.created !== ROWS)
      throw new Error(`import ended ${done.status}: ${JSON.stringify(done)}`);
    const results = {
      database: DIALECT,
      rows: ROWS,
      fileMb: Number((bytes / 1024 / 1024).toFixed(1)),
      upload: { seconds: uploadSeconds, rowsPerSecond: Math.round(ROWS / uploadSeconds) },
      apply: {
        seconds: seconds - uploadSeconds,
        rowsPerSecond: Math.round(ROWS / (seconds - uploadSeconds)),
      },
      total: { seconds, rowsPerSecond: Math.round(ROWS / seconds) },
      rssBeforeMb: Math.round(rssBefore),
      rssGrowthMb: Math.round(rssPeak - rssBefore),
    };
    const goals = { finished: true, rss: results.rssGrowthMb < GOALS.rssGrowthMb };
    log(JSON.stringify({ ...results, goals }, null, 2));
    writeResults(path.join(__dirname, 'results', `import-${DIALECT}.json`), 'import', {
      ...results,
      goals,
    });
  } finally {
    server?.kill('SIGTERM');
    await new Promise((resolve) => (server ? server.once('exit', resolve) : resolve()));
    await db.drop();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
