'use strict';
/**
 * The scripted loopback server of the SDK conformance suite (conformance/http/scenarios.json).
 *
 * `node tooling/conformance/src/server.js` listens on 127.0.0.1 (a free port) and prints
 * `listening http://127.0.0.1:PORT` on its first line. A runner then, per scenario:
 *   POST /__conformance/start {"name": "…"}   loads the scenario, forgets earlier requests
 *   … the SDK call, whose requests are checked against the scenario's `exchanges` in order
 *   GET  /__conformance/verdict               {"requests": n, "expected": n, "mismatches": […]}
 * so every SDK is judged on the wire by this one implementation; a runner checks only what the
 * call returned or threw. Ends on SIGTERM, SIGINT or when its stdin closes (its runner died).
 */
const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');

const SCENARIOS_FILE = path.resolve(__dirname, '../../../conformance/http/scenarios.json');
const CONTROL = '/__conformance/';
const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

function loadScenarios(file = SCENARIOS_FILE) {
  const { scenarios } = JSON.parse(fs.readFileSync(file, 'utf8'));
  return new Map(scenarios.map((scenario) => [scenario.name, scenario]));
}

/** `stu_` + 26 Crockford characters encoding `n`: a well-formed id, the same in every run. */
function idFor(prefix, n) {
  let text = '';
  for (let value = n, i = 0; i < 26; i++, value = Math.floor(value / 32)) {
    text = CROCKFORD.charAt(value % 32) + text;
  }
  return `${prefix}_${text}`;
}

/** A list page the way the API answers one: `{"$page": {total, page, per_page, prefix, object}}`. */
function listPage(spec, origin, pathname, query) {
  const { total, page, per_page: perPage, prefix, object } = spec;
  const totalPages = Math.max(1, Math.ceil(total / perPage));
  const start = (page - 1) * perPage;
  const count = Math.max(0, Math.min(perPage, total - start));
  const data = Array.from({ length: count }, (_, i) => ({
    id: idFor(prefix, start + i + 1),
    object,
  }));
  const link = (n) => {
    const params = new URLSearchParams(query);
    params.set('page', String(n));
    params.set('per_page', String(perPage));
    return `${origin}${pathname}?${params}`;
  };
  return {
    data,
    meta: { page, per_page: perPage, total, total_pages: totalPages },
    links: {
      self: link(page),
      first: link(1),
      prev: page > 1 ? link(page - 1) : null,
      next: page < totalPages ? link(page + 1) : null,
      last: link(totalPages),
    },
  };
}

/** Header values with `{"$http_date_in": seconds}` filled in. */
function responseHeaders(headers = {}) {
  const out = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value && typeof value === 'object' && '$http_date_in' in value) {
      out[name] = new Date(Date.now() + value.$http_date_in * 1000).toUTCString();
    } else {
      out[name] = String(value);
    }
  }
  return out;
}

/** Whether `actual` (parsed JSON) equals `expected` exactly, as JSON values. */
function jsonEqual(actual, expected) {
  return JSON.stringify(canonical(actual)) === JSON.stringify(canonical(expected));
}

function canonical(value) {
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((key) => [key, canonical(value[key])]),
    );
  }
  return value;
}

/** What is wrong with request number `index` against the exchange's `request` expectation. */
function checkRequest(expect, request, earlier, index) {
  const problems = [];
  const at = `request ${index + 1}`;
  if (expect.method && request.method !== expect.method) {
    problems.push(`${at}: method ${request.method}, expected ${expect.method}`);
  }
  if (expect.path !== undefined && request.path !== expect.path) {
    problems.push(`${at}: path ${request.path}, expected ${expect.path}`);
  }
  if (expect.query !== undefined) {
    const actual = Object.fromEntries(request.query);
    if (request.query.length !== Object.keys(actual).length) {
      problems.push(`${at}: a query parameter is repeated: ${request.rawQuery}`);
    }
    if (!jsonEqual(actual, expect.query)) {
      problems.push(
        `${at}: query ${JSON.stringify(actual)}, expected ${JSON.stringify(expect.query)}`,
      );
    }
  }
  for (const [name, rule] of Object.entries(expect.headers ?? {})) {
    const value = request.headers[name.toLowerCase()];
    const shown = value === undefined ? 'absent' : JSON.stringify(value);
    if (rule === 'present') {
      if (value === undefined || value === '') problems.push(`${at}: header ${name} is absent`);
    } else if (rule === 'absent') {
      if (value !== undefined) problems.push(`${at}: header ${name} is ${shown}, expected absent`);
    } else if (typeof rule === 'string') {
      if (value !== rule)
        problems.push(`${at}: header ${name} is ${shown}, expected ${JSON.stringify(rule)}`);
    } else if ('matches' in rule) {
      if (value === undefined || !new RegExp(rule.matches).test(value)) {
        problems.push(`${at}: header ${name} is ${shown}, expected to match /${rule.matches}/`);
      }
    } else if ('same_as_request' in rule) {
      const other = earlier[rule.same_as_request - 1]?.headers[name.toLowerCase()];
      if (value === undefined || value !== other) {
        problems.push(
          `${at}: header ${name} is ${shown}, expected the same as request ${rule.same_as_request} (${JSON.stringify(other)})`,
        );
      }
    }
  }
  if ('body' in expect) {
    if (expect.body === null) {
      if (request.body.length > 0)
        problems.push(`${at}: has a body, expected none: ${request.body}`);
    } else {
      let parsed;
      try {
        parsed = JSON.parse(request.body);
      } catch {
        problems.push(`${at}: body is not JSON: ${JSON.stringify(request.body)}`);
      }
      if (parsed !== undefined && !jsonEqual(parsed, expect.body)) {
        problems.push(`${at}: body ${request.body}, expected ${JSON.stringify(expect.body)}`);
      }
    }
  }
  return problems;
}

/** Where `actual` differs from `expected`, read as a subset: extra keys in `actual` are fine. */
function subsetProblems(actual, expected, at) {
  if (expected === null || typeof expected !== 'object') {
    return actual === expected
      ? []
      : [`${at} is ${JSON.stringify(actual)}, expected ${JSON.stringify(expected)}`];
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual) || actual.length !== expected.length) {
      return [`${at} is ${JSON.stringify(actual)}, expected ${JSON.stringify(expected)}`];
    }
    return expected.flatMap((item, i) => subsetProblems(actual[i], item, `${at}[${i}]`));
  }
  if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) {
    return [
      `${at} is ${JSON.stringify(actual)}, expected an object like ${JSON.stringify(expected)}`,
    ];
  }
  return Object.entries(expected).flatMap(([key, value]) =>
    key in actual
      ? subsetProblems(actual[key], value, `${at}.${key}`)
      : [`${at}.${key} is missing`],
  );
}

/**
 * What is wrong with the outcome a runner reports: `{ok, value, status, request_id, headers,
 * ids, error, waits}` (see the scenario file's `format.expect`).
 */
function checkOutcome(expect, outcome) {
  const problems = [];
  if (outcome.ok !== expect.ok) {
    problems.push(
      expect.ok
        ? `the call failed: ${JSON.stringify(outcome.error)}`
        : `the call succeeded, expected the error ${JSON.stringify(expect.error)}`,
    );
    return problems;
  }
  for (const key of ['value', 'status', 'request_id', 'headers', 'error']) {
    if (key in expect) problems.push(...subsetProblems(outcome[key], expect[key], key));
  }
  if (expect.items) {
    const ids = outcome.ids ?? [];
    const items = { count: ids.length, unique: new Set(ids).size, first: ids[0], last: ids.at(-1) };
    problems.push(...subsetProblems(items, expect.items, 'items'));
  }
  const waits = outcome.waits ?? [];
  if (waits.length !== expect.waits.length) {
    problems.push(
      `waited ${JSON.stringify(waits)} (s), expected ${expect.waits.length} wait(s) in ${JSON.stringify(expect.waits)}`,
    );
  } else {
    expect.waits.forEach(([min, max], i) => {
      // A millisecond of rounding either way (one SDK counts in ms).
      if (!(waits[i] >= min - 0.001 && waits[i] <= max + 0.001)) {
        problems.push(`wait ${i + 1} was ${waits[i]} s, expected between ${min} and ${max} s`);
      }
    });
  }
  return problems;
}

/** Sends a scripted response, after its delay, or drops the connection if it says so. */
function respond(spec, request, req, res) {
  const send = () => {
    if (spec.drop) {
      req.socket.destroy();
      return;
    }
    const headers = responseHeaders(spec.headers);
    let payload = '';
    if (spec.json !== undefined) {
      const json =
        spec.json && typeof spec.json === 'object' && '$page' in spec.json
          ? listPage(spec.json.$page, `http://${req.headers.host}`, request.path, request.query)
          : spec.json;
      payload = JSON.stringify(json);
      const problem = (spec.status ?? 200) >= 400;
      headers['content-type'] ??= problem ? 'application/problem+json' : 'application/json';
    } else if (spec.text !== undefined) {
      payload = spec.text;
      headers['content-type'] ??= 'text/plain';
    }
    if (!res.writable || res.destroyed) return;
    res.writeHead(spec.status ?? 200, headers);
    res.end(payload);
  };
  if (spec.delay_ms) {
    const timer = setTimeout(send, spec.delay_ms);
    res.on('close', () => clearTimeout(timer));
  } else {
    send();
  }
}

function createConformanceServer(scenarios = loadScenarios()) {
  let current;
  let requests = [];
  let mismatches = [];

  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      const body = Buffer.concat(chunks).toString('utf8');
      if (url.pathname.startsWith(CONTROL))
        return control(url.pathname.slice(CONTROL.length), body, res);
      const request = {
        method: req.method ?? '',
        path: url.pathname,
        query: [...url.searchParams.entries()],
        rawQuery: url.search,
        headers: req.headers,
        body,
      };
      const index = requests.length;
      requests.push(request);
      const exchange = current?.exchanges[index];
      if (!exchange) {
        mismatches.push(
          `request ${index + 1} (${request.method} ${request.path}${request.rawQuery}) was not expected: the scenario has ${current?.exchanges.length ?? 0}`,
        );
        res.writeHead(500, { 'content-type': 'text/plain' });
        return res.end('conformance: no response scripted for this request');
      }
      mismatches.push(...checkRequest(exchange.request ?? {}, request, requests, index));
      respond(exchange.response ?? { status: 200 }, request, req, res);
    });
  });

  function control(action, body, res) {
    const reply = (status, value) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(value));
    };
    if (action === 'start') {
      const { name } = JSON.parse(body || '{}');
      current = scenarios.get(name);
      requests = [];
      mismatches = [];
      if (!current) return reply(404, { error: `no scenario named ${JSON.stringify(name)}` });
      return reply(200, { name });
    }
    if (action === 'verdict') {
      const expected = current?.exchanges.length ?? 0;
      const problems = [...mismatches];
      if (requests.length < expected) {
        problems.push(`${requests.length} request(s) arrived, the scenario expects ${expected}`);
      }
      if (current && body) problems.push(...checkOutcome(current.expect, JSON.parse(body)));
      return reply(200, { requests: requests.length, expected, mismatches: problems });
    }
    return reply(404, { error: `unknown control action ${action}` });
  }

  return server;
}

if (require.main === module) {
  const server = createConformanceServer();
  server.listen(0, '127.0.0.1', () => {
    process.stdout.write(`listening http://127.0.0.1:${server.address().port}\n`);
  });
  const stop = () => {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  // The runner that started us holds our stdin: when it goes, so do we.
  process.stdin.on('end', stop);
  process.stdin.on('error', stop);
  process.stdin.resume();
}

module.exports = { createConformanceServer, loadScenarios, idFor, SCENARIOS_FILE };
