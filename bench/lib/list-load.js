'use strict';
/**
 * The students-list benchmark's load (students-list.bench.js): autocannon against each target,
 * every case measured in rounds, with the CPU each process spent; `config` is lib/list-config.js's.
 */
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const autocannon = require('autocannon');
const { REPO_ROOT, PAGES, DEEP_PAGE, pageUrl } = require('./list-config');
const { profilerRequest } = require('./processes');
const { BenchError } = require('./bench-error');

function percentile(sorted, p) {
  if (!sorted.length) return NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index];
}

function latencySummary(sorted) {
  return {
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted.length ? sorted[sorted.length - 1] : NaN,
    mean: sorted.reduce((a, b) => a + b, 0) / (sorted.length || 1),
  };
}

/** Any non-2xx answer, connection error or timeout under load is a problem to report. */
function loadProblems(label, phase, { result, statuses }) {
  const problems = [];
  const non2xx = Object.entries(statuses).filter(([code]) => !code.startsWith('2'));
  if (non2xx.length) {
    problems.push(
      `${label} (${phase}): non-2xx responses ${non2xx.map(([c, n]) => `${n}×${c}`).join(', ')}`,
    );
  }
  if (result.errors || result.timeouts) {
    problems.push(
      `${label} (${phase}): ${result.errors} connection errors, ${result.timeouts} timeouts`,
    );
  }
  return problems;
}

/** Clock ticks per second of /proc/<pid>/stat times (sysconf CLK_TCK; 100 on Linux in practice). */
const CLOCK_TICKS = (() => {
  const result = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' });
  const n = Number(result.stdout?.trim());
  return Number.isFinite(n) && n > 0 ? n : 100;
})();

/** CPU seconds (user + system, all threads) a child has used so far; null off Linux. */
function cpuSeconds(record) {
  try {
    const stat = fs.readFileSync(`/proc/${record.child.pid}/stat`, 'utf8');
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return null;
  }
}

function peakRssMb(record) {
  try {
    const status = fs.readFileSync(`/proc/${record.child.pid}/status`, 'utf8');
    const kb = /VmHWM:\s+(\d+) kB/.exec(status);
    return kb ? Math.round(Number(kb[1]) / 1024) : null;
  } catch {
    return null;
  }
}

/** The URL of `target`'s page `page` as a walk reaches it: links.next of the page before. */
async function cursorUrl(target, page) {
  const res = await fetch(pageUrl(target.base, page - 1), { headers: target.headers });
  const body = await res.json();
  const next = body?.links?.next;
  if (res.status !== 200 || typeof next !== 'string' || !next.includes('cursor='))
    throw new BenchError(`page ${page - 1} gave no cursor in links.next (status ${res.status})`);
  return next;
}

/** Who is measured on page 1: the server (both tokens), the baseline and the peer if run. */
function pageOneTargets(targets) {
  return [targets.server, targets.oauth, targets.bare, ...(targets.peer ? [targets.peer] : [])];
}

/** The load of one run, and the autocannon instance running, to stop it if the run fails. */
class ListLoad {
  constructor(config, log) {
    this.config = config;
    this.log = log;
    this.active = undefined;
  }

  /** Stops the load running, if any. */
  stop() {
    this.active?.stop?.();
  }

  /**
   * One autocannon run for `{ duration }` seconds or `{ amount }` requests; latencies are recorded
   * here at full (sub-ms) precision, statuses counted here too.
   */
  load(url, headers, length) {
    return new Promise((resolve, reject) => {
      const latencies = [];
      const statuses = {};
      const instance = autocannon(
        { url, headers, connections: this.config.connections, timeout: 10, ...length },
        (error, result) => {
          if (error) reject(error);
          else resolve({ result, latencies, statuses });
        },
      );
      instance.on('response', (_client, statusCode, _bytes, responseTime) => {
        statuses[statusCode] = (statuses[statusCode] ?? 0) + 1;
        latencies.push(responseTime);
      });
      this.active = instance;
    });
  }

  /** Brings a server's JIT to its steady state: `warmupRequests` requests spread over the pages. */
  async warmUp(target) {
    const started = Date.now();
    const problems = [];
    for (const page of PAGES) {
      const amount = Math.ceil(this.config.warmupRequests / PAGES.length);
      const run = await this.load(pageUrl(target.base, page), target.headers, { amount });
      problems.push(...loadProblems(`${target.name} page ${page}`, 'initial warm-up', run));
    }
    this.log(
      `  ${target.name.padEnd(6)} warmed up with ${this.config.warmupRequests} requests in ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
    return problems;
  }

  /**
   * One case: `target`'s page `page`, by number, or with `cursor` the URL links.next gave for it
   * (a keyset page: no OFFSET).
   */
  async runCase(target, page, round, cursor) {
    const { config } = this;
    const url = cursor ?? pageUrl(target.base, page);
    const label = `${target.name}${cursor ? ' cursor' : ''} page ${page}`;
    const problems = [];

    process.stdout.write(
      `  ${(config.rounds > 1 ? `${round}/${config.rounds} ${label}` : label).padEnd(22)} `,
    );
    if (config.warmupSec > 0) {
      process.stdout.write(`warm-up ${config.warmupSec} s… `);
      problems.push(
        ...loadProblems(
          label,
          'warm-up',
          await this.load(url, target.headers, { duration: config.warmupSec }),
        ),
      );
    }
    process.stdout.write(`measuring ${config.durationSec} s… `);
    let profileFile;
    if (config.cpuProfile && round === 1) {
      profileFile = path.join(
        config.profilesDir,
        `${target.name}${cursor ? '-cursor' : ''}-page-${page}.cpuprofile`,
      );
      await profilerRequest(target.record, { type: 'profile:start' }, 'profile:started');
    }
    const cpuBefore = cpuSeconds(target.record);
    const loadCpuBefore = process.cpuUsage();
    const run = await this.load(url, target.headers, { duration: config.durationSec });
    const cpuAfter = cpuSeconds(target.record);
    const loadCpu = process.cpuUsage(loadCpuBefore);
    if (profileFile)
      await profilerRequest(
        target.record,
        { type: 'profile:stop', file: profileFile },
        'profile:stopped',
      );
    problems.push(...loadProblems(label, 'load', run));
    if (target.record.exited) problems.push(`${label}: ${target.name} exited during the load`);

    const sorted = Float64Array.from(run.latencies).sort();
    const ok2xx = Object.entries(run.statuses).reduce(
      (n, [code, count]) => (code.startsWith('2') ? n + count : n),
      0,
    );
    const measured = {
      name: label,
      target: target.name,
      page,
      url,
      duration_s: run.result.duration,
      requests: run.latencies.length,
      requests_2xx: ok2xx,
      rps: ok2xx / run.result.duration,
      latency_ms: latencySummary(sorted),
      // CPU the server process spent per answered request: unlike req/s, barely moved by other
      // processes competing for the cores, so it tells contention apart from real cost.
      cpu_ms_per_request:
        cpuBefore !== null && cpuAfter !== null && ok2xx
          ? ((cpuAfter - cpuBefore) * 1000) / ok2xx
          : null,
      cpu_utilization:
        cpuBefore !== null && cpuAfter !== null
          ? (cpuAfter - cpuBefore) / run.result.duration
          : null,
      load_generator_cpu_utilization: (loadCpu.user + loadCpu.system) / 1e6 / run.result.duration,
      bytes_per_response: run.result.requests.total
        ? Math.round(run.result.throughput.total / run.result.requests.total)
        : 0,
      status_codes: run.statuses,
      non_2xx: run.latencies.length - ok2xx,
      errors: run.result.errors,
      timeouts: run.result.timeouts,
      ...(profileFile && { cpu_profile: path.relative(REPO_ROOT, profileFile) }),
    };
    this.log(`${measured.rps.toFixed(0)} req/s${problems.length ? '  !! PROBLEMS' : ''}`);
    return { measured, problems };
  }

  /** Every case, each round interleaved, reported by its median round; the problems met. */
  async measure(targets) {
    const { config } = this;
    const problems = [];
    if (config.warmupRequests > 0) {
      for (const target of pageOneTargets(targets)) problems.push(...(await this.warmUp(target)));
      this.log();
    }

    // The deep page as a walk reaches it: the cursor links.next gives on the page before.
    const cursor = await cursorUrl(targets.server, DEEP_PAGE);
    // Interleaved so that any drift of the machine during the run hits both alike.
    const runs = new Map();
    const run = async (target, page, round, url) => {
      const { measured, problems: found } = await this.runCase(target, page, round, url);
      runs.set(measured.name, [...(runs.get(measured.name) ?? []), measured]);
      problems.push(...found);
    };
    for (let round = 1; round <= config.rounds; round++) {
      for (const page of PAGES) {
        const measuredTargets =
          page === 1 ? pageOneTargets(targets) : [targets.server, targets.bare];
        for (const target of measuredTargets) await run(target, page, round);
      }
      await run(targets.server, DEEP_PAGE, round, cursor);
    }
    // With several rounds, each case reports its median round (by req/s), whole, so that its
    // latencies and CPU figures come from the same run as its throughput.
    const cases = [...runs.values()].map((rounds) => {
      const median = [...rounds].sort((a, b) => a.rps - b.rps)[Math.floor((rounds.length - 1) / 2)];
      const profiled = rounds.find((r) => r.cpu_profile)?.cpu_profile;
      return {
        ...median,
        ...(profiled && { cpu_profile: profiled }),
        ...(rounds.length > 1 && {
          rounds: rounds.map((r) => ({
            rps: r.rps,
            p50_ms: r.latency_ms.p50,
            p99_ms: r.latency_ms.p99,
            cpu_ms_per_request: r.cpu_ms_per_request,
          })),
        }),
      };
    });
    return { cases, problems };
  }
}

module.exports = { ListLoad, peakRssMb };
