'use strict';
const { summarize, format, LIST_REQUEST_STEPS } = require('../profiling/summarize-cpu-profile');

const frame = (id, functionName, url, children = []) => ({
  id,
  callFrame: { functionName, url, lineNumber: 0, columnNumber: 0, scriptId: String(id) },
  children,
});
const modules = 'file:///repo/node_modules/.pnpm';

// root → the router → the server's JSON reply → a V8 builtin without location (JSON.stringify);
// root → better-sqlite3's all → native; root → GC; root → idle.
const profile = {
  nodes: [
    frame(1, '(root)', '', [2, 6, 8, 9]),
    frame(2, 'handle', `${modules}/router@2.3.0/node_modules/router/index.js`, [3]),
    frame(3, 'reply', 'file:///repo/apps/server/dist/common/json-reply.js', [4]),
    frame(4, '', '', [5]),
    frame(5, '', ''),
    frame(6, 'all', `${modules}/better-sqlite3@12/node_modules/better-sqlite3/lib/methods.js`, [7]),
    frame(7, '', ''),
    frame(8, '(garbage collector)', ''),
    frame(9, '(idle)', ''),
  ],
  // Each sample is charged the time until the next one (the last one nothing).
  samples: [5, 5, 4, 7, 2, 8, 9, 9],
  timeDeltas: [0, 100, 100, 100, 300, 50, 50, 500],
};

describe('CPU profile steps', () => {
  const summary = summarize(profile, { steps: LIST_REQUEST_STEPS });
  const step = (name) => summary.steps.find((s) => s.step === name);

  it('charges a frame without location to the JavaScript that called it', () => {
    expect(step('JSON and the socket write').self_ms).toBeCloseTo(0.3);
    expect(step('the statement (driver and database)').self_ms).toBeCloseTo(0.3);
  });

  it('groups the rest by step, idle left out', () => {
    expect(step(LIST_REQUEST_STEPS.at(-1)[0]).self_ms).toBeCloseTo(0.05);
    expect(
      step('framework: Nest, rxjs, router, Express, HTTP parsing, async context').self_ms,
    ).toBeCloseTo(0.05);
    const busy = summary.steps.reduce((sum, s) => sum + s.self_ms, 0);
    expect(busy).toBeCloseTo(summary.busy_ms);
    expect(summary.steps.reduce((sum, s) => sum + s.self_pct, 0)).toBeCloseTo(100);
  });

  it('prints each step in microseconds per request when the CPU time per request is known', () => {
    const text = format(summary, 'case', { cpuMsPerRequest: 1.4 });
    // 0.3 of 0.7 ms busy is 42.9 %, of 1.4 ms per request 600 µs.
    expect(text).toMatch(/42\.9\s+600 {2}JSON and the socket write/);
  });
});
