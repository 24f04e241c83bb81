'use strict';
/**
 * Summarizes a V8 `.cpuprofile` (from the benchmark's BENCH_CPU_PROF=1, or `node --cpu-prof`):
 * the functions with the most self time, and self time grouped by where the code comes from
 * (npm package, workspace package, Node core, V8). Percentages are of busy time (idle excluded).
 *
 * Native code called from JavaScript (better-sqlite3's Statement#all, for instance) has no frame
 * of its own: its time is the self time of the JavaScript function that called it.
 *
 *   node bench/profiling/summarize-cpu-profile.js <file.cpuprofile> [--top 25] [--inclusive fnA,fnB]
 *
 * `--inclusive` adds, for each named function, the share of busy samples with it on the stack.
 */
const fs = require('node:fs');
const path = require('node:path');

const REPO_ROOT = path.resolve(__dirname, '..', '..');

/** Where a frame's code comes from: an npm package, our own code, Node itself, or V8. */
function origin(url, functionName) {
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  if (url.startsWith('node:')) return 'node (core)';
  const file = url.replace(/^file:\/\//, '');
  const nm = file.lastIndexOf('/node_modules/');
  if (nm !== -1) {
    const parts = file.slice(nm + '/node_modules/'.length).split('/');
    return parts[0].startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
  }
  const rel = path.relative(REPO_ROOT, file);
  if (!rel.startsWith('..')) {
    const m = /^(apps|packages|bench)\/([^/]+)/.exec(rel);
    return m ? `${m[1]}/${m[2]} (workspace)` : rel;
  }
  return file;
}

function shortLocation(url, line) {
  if (!url) return '';
  if (url.startsWith('node:')) return `${url}:${line + 1}`;
  const file = url.replace(/^file:\/\//, '');
  const nm = file.lastIndexOf('/node_modules/');
  const shown =
    nm !== -1
      ? file.slice(nm + '/node_modules/'.length)
      : path.relative(REPO_ROOT, file).startsWith('..')
        ? file
        : path.relative(REPO_ROOT, file);
  return `${shown}:${line + 1}`;
}

/**
 * The steps of a list request, each matched against a frame's `location` (file:line) and function
 * name, the first match winning: `summarize(profile, { steps: LIST_REQUEST_STEPS })` groups self
 * time by step. Native code (a frame without a location: V8 builtins, better-sqlite3's statement,
 * the socket write) counts for the nearest JavaScript caller.
 */
const LIST_REQUEST_STEPS = [
  [
    'the statement (driver and database)',
    /better-sqlite3|QueryRunner|\/pg\/|pg-protocol|database\/sql\.js/,
  ],
  [
    'rows to resources and the page envelope',
    /resource-fields|list\/|owned-records|typeorm|list-cursor|dist\/index\.js/,
  ],
  [
    'JSON and the socket write',
    /json-reply|express\/lib\/response|_http_outgoing|streams\/|node:net|stream_base|stringify/,
  ],
  [
    'auth, rate limit, request log, metrics, security headers',
    /dist\/auth\/|rate-limit|request-log|metrics|prom-client|helmet|nul-guard|request-id|version\.js|content-negotiation|front-door|node:internal\/crypto|oneShotDigest|passport/,
  ],
  ['validation (zod)', /zod/],
  [
    'framework: Nest, rxjs, router, Express, HTTP parsing, async context',
    /@nestjs|rxjs|router\/|express|path-to-regexp|_http_common|_http_incoming|_http_server|async_hooks|task_queues|node:events|timers|runMicrotasks|parserOnHeadersComplete/,
  ],
  ['garbage collection', /^\(garbage collector\)/],
];

/** Self time (µs) by step of `steps` (see LIST_REQUEST_STEPS), idle left out. */
function stepTimes(steps, { nodes, parent, selfUs }) {
  const byStep = new Map(steps.map(([name]) => [name, 0]));
  if (!steps.length) return byStep;
  // Native code (no location; the name V8 gives it may be any nearby symbol's) counts for the
  // JavaScript that called it; V8's own entries, "(garbage collector)", stay.
  const native = (frame) => !frame.url && !frame.functionName.startsWith('(');
  for (const [id, us] of selfUs) {
    if (nodes.get(id).callFrame.functionName === '(idle)') continue;
    let at = id;
    while (parent.has(at) && native(nodes.get(at).callFrame)) at = parent.get(at);
    const { functionName, url, lineNumber } = nodes.get(at).callFrame;
    const subject = `${functionName} ${shortLocation(url, lineNumber)}`;
    const step = steps.find(([, pattern]) => pattern.test(subject))?.[0] ?? 'other';
    byStep.set(step, (byStep.get(step) ?? 0) + us);
  }
  return byStep;
}

/** For each named function, the time of the samples with it anywhere on their stack (µs). */
function inclusiveTimes(names, { nodes, parent, selfUs }) {
  const inclusiveUs = new Map(names.map((name) => [name, 0]));
  if (!names.length) return inclusiveUs;
  for (const [id, us] of selfUs) {
    const seen = new Set();
    for (let at = id; at !== undefined; at = parent.get(at)) {
      const name = nodes.get(at).callFrame.functionName;
      if (inclusiveUs.has(name) && !seen.has(name)) {
        seen.add(name);
        inclusiveUs.set(name, inclusiveUs.get(name) + us);
      }
    }
  }
  return inclusiveUs;
}

function summarize(profile, { top = 25, inclusive = [], steps = [] } = {}) {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map();
  const { samples, timeDeltas } = profile;
  // timeDeltas[i] is the time before sample i; attribute each sample the time until the next one.
  for (let i = 0; i < samples.length; i++) {
    const dt = i + 1 < timeDeltas.length ? timeDeltas[i + 1] : 0;
    selfUs.set(samples[i], (selfUs.get(samples[i]) ?? 0) + Math.max(0, dt));
  }

  const byFunction = new Map();
  const byOrigin = new Map();
  let totalUs = 0;
  let idleUs = 0;
  for (const [id, us] of selfUs) {
    const { functionName, url, lineNumber } = nodes.get(id).callFrame;
    totalUs += us;
    if (functionName === '(idle)') {
      idleUs += us;
      continue;
    }
    const name = functionName || '(anonymous)';
    const key = `${name}\u0000${url}\u0000${lineNumber}`;
    const entry = byFunction.get(key) ?? {
      name,
      location: shortLocation(url, lineNumber),
      origin: origin(url, name),
      us: 0,
    };
    entry.us += us;
    byFunction.set(key, entry);
    const o = origin(url, name);
    byOrigin.set(o, (byOrigin.get(o) ?? 0) + us);
  }
  const busyUs = totalUs - idleUs;
  const pct = (us) => (busyUs > 0 ? (100 * us) / busyUs : 0);

  // Inclusive time: a sample counts for a function when the function is anywhere on its stack.
  const parent = new Map();
  for (const n of profile.nodes) for (const child of n.children ?? []) parent.set(child, n.id);
  const byStep = stepTimes(steps, { nodes, parent, selfUs });
  const inclusiveUs = inclusiveTimes(inclusive, { nodes, parent, selfUs });

  return {
    total_ms: totalUs / 1000,
    idle_ms: idleUs / 1000,
    busy_ms: busyUs / 1000,
    functions: [...byFunction.values()]
      .sort((a, b) => b.us - a.us)
      .slice(0, top)
      .map((f) => ({
        function: f.name,
        origin: f.origin,
        location: f.location,
        self_ms: f.us / 1000,
        self_pct: pct(f.us),
      })),
    origins: [...byOrigin.entries()]
      .sort((a, b) => b[1] - a[1])
      .map(([o, us]) => ({ origin: o, self_ms: us / 1000, self_pct: pct(us) })),
    ...(steps.length && {
      steps: [...byStep.entries()]
        .sort((a, b) => b[1] - a[1])
        .map(([step, us]) => ({ step, self_ms: us / 1000, self_pct: pct(us) })),
    }),
    ...(inclusive.length && {
      inclusive: [...inclusiveUs.entries()].map(([name, us]) => ({
        function: name,
        total_ms: us / 1000,
        total_pct: pct(us),
      })),
    }),
  };
}

/**
 * `cpuMsPerRequest` (the case's CPU time per request, measured without the profiler) turns each
 * step's share into microseconds per request.
 */
function format(summary, title, { origins = 20, cpuMsPerRequest } = {}) {
  const lines = [];
  lines.push(
    `${title}: ${summary.busy_ms.toFixed(0)} ms busy of ${summary.total_ms.toFixed(0)} ms sampled`,
  );
  lines.push('');
  lines.push('  self %   self ms  function                                  location');
  for (const f of summary.functions) {
    lines.push(
      `  ${f.self_pct.toFixed(1).padStart(6)}  ${f.self_ms.toFixed(0).padStart(8)}  ${f.function.slice(0, 40).padEnd(40)}  ${f.location}`,
    );
  }
  lines.push('');
  lines.push('  self %   self ms  by origin');
  for (const o of summary.origins.slice(0, origins)) {
    lines.push(
      `  ${o.self_pct.toFixed(1).padStart(6)}  ${o.self_ms.toFixed(0).padStart(8)}  ${o.origin}`,
    );
  }
  if (summary.steps) {
    const perRequest = Number.isFinite(cpuMsPerRequest);
    lines.push('');
    lines.push(`  self %  ${perRequest ? 'µs/req' : '      '}  by step`);
    for (const s of summary.steps) {
      const us = perRequest ? ((s.self_pct / 100) * cpuMsPerRequest * 1000).toFixed(0) : '';
      lines.push(`  ${s.self_pct.toFixed(1).padStart(6)}  ${us.padStart(6)}  ${s.step}`);
    }
  }
  if (summary.inclusive) {
    lines.push('');
    lines.push(' total %  total ms  inclusive (on the stack)');
    for (const f of summary.inclusive) {
      lines.push(
        `  ${f.total_pct.toFixed(1).padStart(6)}  ${f.total_ms.toFixed(0).padStart(8)}  ${f.function}`,
      );
    }
  }
  return lines.join('\n');
}

function summarizeFile(file, options) {
  return summarize(JSON.parse(fs.readFileSync(file, 'utf8')), options);
}

module.exports = { summarize, summarizeFile, format, LIST_REQUEST_STEPS };

if (require.main === module) {
  const args = process.argv.slice(2);
  const option = (name, fallback) => {
    const i = args.indexOf(name);
    return i === -1 ? fallback : args.splice(i, 2)[1];
  };
  const top = Number(option('--top', '25'));
  const inclusive = option('--inclusive', '').split(',').filter(Boolean);
  if (args.length !== 1) {
    console.error(
      'usage: node summarize-cpu-profile.js <file.cpuprofile> [--top N] [--inclusive fnA,fnB]',
    );
    process.exit(2);
  }
  console.log(format(summarizeFile(args[0], { top, inclusive }), path.basename(args[0])));
}
