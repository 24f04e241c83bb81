'use strict';
/**
 * The students-list benchmark's report (students-list.bench.js): the header, the ratios the goals
 * judge, the tables printed and the results file's content; `config` is lib/list-config.js's.
 */
const { spawnSync } = require('node:child_process');
const os = require('node:os');
const path = require('node:path');
const { REPO_ROOT, STUDENTS, PER_PAGE, PAGES, GOALS } = require('./list-config');

/** A goal is judged on req/s; `byCpu` is the same ratio from CPU time per request, for reference. */
function ratio(name, value, byCpu, goal) {
  if (!goal) {
    return {
      name,
      value,
      by_cpu_per_request: Number.isFinite(byCpu) ? byCpu : null,
      goal: '-',
      met: null,
    };
  }
  const met = goal.min !== undefined ? value >= goal.min : value <= goal.max;
  const text = goal.min !== undefined ? `>= ${goal.min.toFixed(2)}` : `<= ${goal.max.toFixed(2)}`;
  return {
    name,
    value,
    by_cpu_per_request: Number.isFinite(byCpu) ? byCpu : null,
    goal: text,
    met,
  };
}

const fixed = (value, digits) =>
  value === null || value === undefined || !Number.isFinite(value) ? '-' : value.toFixed(digits);

function table(rows, columns) {
  const widths = columns.map((c) =>
    Math.max(c.title.length, ...rows.map((r) => String(c.value(r)).length)),
  );
  const line = (cells) =>
    cells
      .map((cell, i) =>
        columns[i].align === 'left'
          ? String(cell).padEnd(widths[i])
          : String(cell).padStart(widths[i]),
      )
      .join('   ');
  return [
    line(columns.map((c) => c.title)),
    line(widths.map((w) => '-'.repeat(w))),
    ...rows.map((r) => line(columns.map((c) => c.value(r)))),
  ]
    .map((l) => `  ${l.trimEnd()}`)
    .join('\n');
}

function gitInfo() {
  const run = (args) => spawnSync('git', args, { cwd: REPO_ROOT, encoding: 'utf8' });
  const head = run(['rev-parse', 'HEAD']);
  if (head.status !== 0) return null;
  return { commit: head.stdout.trim(), dirty: run(['status', '--porcelain']).stdout.trim() !== '' };
}

/** What is measured, on what, with which settings. */
function logHeader(config, log) {
  log(
    `Students list benchmark: GET /v1/students?per_page=${PER_PAGE}&page=N, ${STUDENTS} students, on ${config.database === 'sqlite' ? 'SQLite' : 'PostgreSQL'}`,
  );
  log(
    `  ${config.connections} connections, ${config.durationSec} s per case after a ${config.warmupSec} s warm-up` +
      `${config.rounds > 1 ? `, ${config.rounds} rounds (median reported)` : ''}; ` +
      `Node ${process.version}, ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? 'unknown'})`,
  );
  if (config.cpuProfile)
    log(
      '  BENCH_CPU_PROF=1: every measured case is CPU-profiled; figures are distorted by the profiler.',
    );
  log();
}

/** The ratios the goals judge, by req/s and by CPU per request. */
function ratiosOf(config, cases) {
  const byName = Object.fromEntries(cases.map((c) => [c.name, c]));
  const rps = (name) => byName[name].rps;
  const cpu = (name) => byName[name].cpu_ms_per_request ?? NaN;
  const ratios = [
    ratio(
      'server / bare throughput, page 1',
      rps('server page 1') / rps('bare page 1'),
      cpu('bare page 1') / cpu('server page 1'),
      GOALS.serverOverBarePage1[config.database],
    ),
    ratio(
      'server cost, cursor page 300 / page 1',
      rps('server page 1') / rps('server cursor page 300'),
      cpu('server cursor page 300') / cpu('server page 1'),
      GOALS.serverDeepPageCost,
    ),
    ratio(
      'server cost, page=300 / page 1',
      rps('server page 1') / rps('server page 300'),
      cpu('server page 300') / cpu('server page 1'),
      null,
    ),
    ratio(
      'OAuth token / personal token throughput, page 1',
      rps('server (OAuth token) page 1') / rps('server page 1'),
      cpu('server page 1') / cpu('server (OAuth token) page 1'),
      null,
    ),
    ratio(
      'bare cost, page 300 / page 1',
      rps('bare page 1') / rps('bare page 300'),
      cpu('bare page 300') / cpu('bare page 1'),
      GOALS.bareDeepPageCost,
    ),
  ];
  if (byName['NestJS + TypeORM peer page 1']) {
    ratios.push(
      ratio(
        'server / NestJS + TypeORM peer throughput, page 1',
        rps('server page 1') / rps('NestJS + TypeORM peer page 1'),
        cpu('NestJS + TypeORM peer page 1') / cpu('server page 1'),
        GOALS.serverOverPeerPage1,
      ),
    );
  }
  return ratios;
}

/** The cases and ratios tables, and how to read them. */
function printResults(log, cases, ratios, bytes) {
  log();
  log('Results');
  log(
    table(cases, [
      { title: 'case', value: (c) => c.name, align: 'left' },
      { title: 'req/s', value: (c) => c.rps.toFixed(1) },
      { title: 'p50 ms', value: (c) => c.latency_ms.p50.toFixed(2) },
      { title: 'p99 ms', value: (c) => c.latency_ms.p99.toFixed(2) },
      { title: 'CPU ms/req', value: (c) => fixed(c.cpu_ms_per_request, 2) },
      {
        title: 'CPU %',
        value: (c) => fixed(c.cpu_utilization === null ? null : c.cpu_utilization * 100, 0),
      },
      { title: 'requests', value: (c) => c.requests },
      { title: 'non-2xx', value: (c) => c.non_2xx },
      { title: 'errors', value: (c) => c.errors + c.timeouts },
    ]),
  );
  log();
  log(
    table(ratios, [
      { title: 'ratio', value: (r) => r.name, align: 'left' },
      { title: 'value', value: (r) => r.value.toFixed(2) },
      { title: 'by CPU/req', value: (r) => fixed(r.by_cpu_per_request, 2) },
      { title: 'goal', value: (r) => r.goal },
      { title: 'met', value: (r) => (r.met === null ? '-' : r.met ? 'yes' : 'NO'), align: 'left' },
    ]),
  );
  log();
  log(
    "  Goals are judged on req/s. Cost ratio = req/s at page 1 / req/s at page 300, reached by links.next's cursor or by page=300 (1.00: a deep page costs",
  );
  log(
    '  the same as the first). "by CPU/req" is the same ratio from the CPU time each process spent per',
  );
  log(
    "  request (CPU ms/req; CPU % is that process's use of one core during the case): if it agrees with",
  );
  log(
    '  the req/s ratio, the result is not an artefact of other processes competing for the CPUs.',
  );
  log(
    `  Load generator: ${cases.map((c) => `${fixed(c.load_generator_cpu_utilization * 100, 0)}%`).join(' / ')} of a core per case;` +
      ` response size ${bytes[1].server} B (server) / ${bytes[1].bare} B (bare) at page 1.`,
  );
}

/** With BENCH_CPU_PROF, each case's CPU profile summarized, printed and returned by case name. */
function profileSummaries(log, cases) {
  const profiles = {};
  const {
    summarizeFile,
    format,
    LIST_REQUEST_STEPS,
  } = require('../profiling/summarize-cpu-profile');
  for (const c of cases) {
    const summary = summarizeFile(path.join(REPO_ROOT, c.cpu_profile), {
      top: c.target === 'server' ? 25 : 10,
      steps: LIST_REQUEST_STEPS,
    });
    profiles[c.name] = { file: c.cpu_profile, ...summary };
    log();
    log(
      format(summary, `CPU profile of ${c.name} (${c.cpu_profile})`, {
        origins: c.target === 'server' ? 15 : 5,
        // Measured under the profiler, so higher than the case's figure without it.
        cpuMsPerRequest: c.cpu_ms_per_request,
      }),
    );
  }
  return profiles;
}

/** The results file's content: the environment, the settings, every figure and the verdict. */
function resultsOf(config, { bytes, cases, ratios, memory, profiles, missed, problems }) {
  return {
    benchmark: 'students-list',
    generated_at: new Date().toISOString(),
    git: gitInfo(),
    environment: {
      node: process.version,
      platform: `${os.platform()} ${os.release()} ${os.arch()}`,
      cpus: os.cpus().length,
      cpu_model: os.cpus()[0]?.model ?? null,
      memory_gb: Math.round(os.totalmem() / 2 ** 30),
    },
    config: {
      database: config.database,
      students: STUDENTS,
      per_page: PER_PAGE,
      pages: PAGES,
      connections: config.connections,
      duration_s: config.durationSec,
      warmup_s: config.warmupSec,
      warmup_requests: config.warmupRequests,
      rounds: config.rounds,
      cpu_profile: config.cpuProfile,
    },
    response_bytes: bytes,
    cases,
    ratios,
    memory,
    ...(config.cpuProfile && { profiles }),
    goals_met: missed.length === 0,
    problems,
    ok: problems.length === 0,
  };
}

module.exports = { logHeader, ratiosOf, printResults, profileSummaries, resultsOf };
