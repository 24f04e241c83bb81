'use strict';
/**
 * The hermetic guard: in tests, benchmarks and scripts, no process may open a connection or
 * send a DNS query to anything outside loopback. Installed once per process; every child Node
 * process inherits it through NODE_OPTIONS.
 *
 * Our own code because no library does this job: nock and msw intercept HTTP only (not pg,
 * ioredis or a raw socket) and replace responses rather than refusing; the check has to sit
 * where every client meets the network, which in Node is `net.Socket#connect` and `dns`.
 *
 * - A TCP connection (net, tls, http, https, fetch/undici, pg, ioredis all go through
 *   `net.Socket#connect`) goes ahead only to a loopback address; a host name is resolved first
 *   and every address it resolves to must be loopback. Unix sockets are local and allowed.
 * - DNS answers come from here, never from a name server: `localhost` and `*.localhost` are
 *   loopback, and `*.test` (RFC 6761, reserved for testing) resolves to TEST_HOST_ADDRESS, an
 *   address that looks public to the webhook SSRF guard but belongs to nobody (see below). Any
 *   other name is refused.
 * - A refusal fails the caller's connection with code EHERMETIC and is written to this run's
 *   violation log, which the Jest hooks (jest-setup.js) and `enforceForRun` read, so a refused
 *   connection fails the test or the run loudly even when the code under test swallowed it.
 */
const dns = require('node:dns');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');

/**
 * What `*.test` names resolve to: 3ffe::/16 was the 6bone's test prefix, returned to IANA in
 * 2006 (RFC 3701) and never allocated since, so no network routes it and nobody's server is
 * there. ipaddr.js rates it global unicast, so the SSRF guard accepts it as public; a
 * connection to it is refused here before any socket exists.
 */
const TEST_HOST_ADDRESS = '3ffe:ffff::7e57';

const INSTALLED = Symbol.for('platform.hermetic.installed');
const LOG_DIR_ENV = 'PLATFORM_HERMETIC_LOG_DIR';
const REGISTER = path.join(__dirname, 'register.js');

function isLoopbackAddress(address) {
  if (net.isIPv4(address)) return address.startsWith('127.');
  if (!net.isIPv6(address)) return false;
  const lower = address.toLowerCase();
  if (lower === '::1' || lower === '0:0:0:0:0:0:0:1') return true;
  // IPv4-mapped loopback (::ffff:127.0.0.1).
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  return mapped !== null && mapped[1].startsWith('127.');
}

/** A name this guard answers itself: what it resolves to, or null if it is not ours. */
function localAnswer(hostname) {
  const name = String(hostname).toLowerCase().replace(/\.$/, '');
  if (name === 'localhost' || name.endsWith('.localhost')) {
    return [
      { address: '127.0.0.1', family: 4 },
      { address: '::1', family: 6 },
    ];
  }
  if (name === 'test' || name.endsWith('.test')) return [{ address: TEST_HOST_ADDRESS, family: 6 }];
  return null;
}

// ---- the violation log ------------------------------------------------------------------

/** One file per Jest worker (children inherit JEST_WORKER_ID), so a worker reads its own. */
function logFile(env = process.env) {
  const dir = env[LOG_DIR_ENV];
  if (!dir) return null;
  return path.join(dir, `worker-${env.JEST_WORKER_ID || 'main'}.jsonl`);
}

function record(kind, target, detail) {
  const entry = { kind, target, detail, pid: process.pid, argv: process.argv.slice(1, 2) };
  const message = `hermetic: refused ${kind} to ${target}${detail ? ` (${detail})` : ''}: tests, benchmarks and scripts may only reach loopback`;
  // Loud even where nobody reads the log (a detached process, a swallowed error).
  process.stderr.write(`\n!!! ${message} [pid ${process.pid}]\n`);
  const file = logFile();
  if (file) {
    try {
      fs.appendFileSync(file, `${JSON.stringify(entry)}\n`);
    } catch {
      // The run's log directory is gone (the run ended); stderr above still says it.
    }
  }
  return Object.assign(new Error(message), { code: 'EHERMETIC', hostname: target });
}

function readEntries(file) {
  let text = '';
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));
}

/** The violations this worker (and its children) recorded since the last call; clears them. */
function takeViolations(env = process.env) {
  const file = logFile(env);
  if (!file) return [];
  const entries = readEntries(file);
  if (entries.length > 0) fs.writeFileSync(file, '');
  return entries;
}

/** Every violation in a run's log directory, from every worker. */
function violationsIn(dir) {
  let names = [];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return [];
  }
  return names.flatMap((name) => readEntries(path.join(dir, name)));
}

function describeViolations(entries) {
  return entries
    .map((e) => `  - ${e.kind} to ${e.target}${e.detail ? ` (${e.detail})` : ''} [pid ${e.pid}]`)
    .join('\n');
}

// ---- DNS --------------------------------------------------------------------------------

function refusedLookup(hostname) {
  return record('DNS lookup', hostname, 'only localhost, *.localhost and *.test resolve here');
}

function answerLookup(answer, options) {
  const family = typeof options === 'number' ? options : (options?.family ?? 0);
  const familyNumber = family === 'IPv4' ? 4 : family === 'IPv6' ? 6 : Number(family) || 0;
  return familyNumber === 0 ? answer : answer.filter((a) => a.family === familyNumber);
}

function guardDns() {
  const originalLookup = dns.lookup;
  const lookup = function hermeticLookup(hostname, options, callback) {
    if (typeof options === 'function') {
      callback = options;
      options = {};
    }
    if (net.isIP(String(hostname)) !== 0) return originalLookup(hostname, options, callback);
    const answer = localAnswer(hostname);
    if (answer === null) {
      const error = refusedLookup(hostname);
      process.nextTick(() => callback(error));
      return {};
    }
    const addresses = answerLookup(answer, options);
    process.nextTick(() => {
      if (addresses.length === 0) {
        const error = Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), {
          code: 'ENOTFOUND',
          hostname,
        });
        return callback(error);
      }
      if (options?.all)
        callback(
          null,
          addresses.map((a) => ({ ...a })),
        );
      else callback(null, addresses[0].address, addresses[0].family);
    });
    return {};
  };
  dns.lookup = lookup;

  const originalPromiseLookup = dns.promises.lookup;
  dns.promises.lookup = async function hermeticPromiseLookup(hostname, options) {
    if (net.isIP(String(hostname)) !== 0) return originalPromiseLookup(hostname, options);
    const answer = localAnswer(hostname);
    if (answer === null) throw refusedLookup(hostname);
    const addresses = answerLookup(answer, options);
    if (addresses.length === 0) {
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), {
        code: 'ENOTFOUND',
        hostname,
      });
    }
    return options?.all ? addresses.map((a) => ({ ...a })) : { ...addresses[0] };
  };

  // resolve*/reverse ask a name server directly (c-ares), whatever the name: refuse them all.
  const refuseQuery = (name) =>
    function hermeticQuery(target, ...rest) {
      const error = record(`DNS query (${name})`, String(target));
      const callback = rest.findLast((arg) => typeof arg === 'function');
      if (callback) {
        process.nextTick(() => callback(error));
        return undefined;
      }
      return Promise.reject(error);
    };
  const queryNames = (object) =>
    Object.keys(object).filter(
      (key) => /^(resolve|reverse)/.test(key) && typeof object[key] === 'function',
    );
  for (const target of [
    dns,
    dns.promises,
    dns.Resolver.prototype,
    dns.promises.Resolver.prototype,
  ]) {
    for (const name of queryNames(target)) target[name] = refuseQuery(name);
  }
}

// ---- TCP --------------------------------------------------------------------------------

const NORMALIZED = Object.getOwnPropertySymbols(net._normalizeArgs([])).find(
  (symbol) => symbol.description === 'normalizedArgs',
);

/** A lookup that hands the socket only loopback addresses, and refuses the rest. */
function loopbackOnlyLookup(inner) {
  return function hermeticSocketLookup(hostname, options, callback) {
    inner(hostname, options, (err, address, family) => {
      if (err) return callback(err, address, family);
      const addresses = Array.isArray(address) ? address.map((a) => a.address) : [address];
      const outside = addresses.find((a) => !isLoopbackAddress(a));
      if (outside !== undefined) {
        return callback(
          record('connection', outside, `resolved from ${hostname}`),
          options?.all ? [] : '',
        );
      }
      callback(null, address, family);
    });
  };
}

function guardNet() {
  const originalConnect = net.Socket.prototype.connect;
  net.Socket.prototype.connect = function hermeticConnect(...args) {
    const normalized =
      Array.isArray(args[0]) && args[0][NORMALIZED] ? args[0] : net._normalizeArgs(args);
    const options = normalized[0];
    // A pipe or Unix socket is local. Truthiness, as net itself tests it: http's agent passes
    // `path: null` for TCP connections.
    if (options.path) return originalConnect.call(this, normalized);
    const host = options.host || 'localhost';
    if (net.isIP(host) !== 0) {
      if (!isLoopbackAddress(host)) {
        const error = record('connection', host, options.port ? `port ${options.port}` : '');
        process.nextTick(() => this.destroy(error));
        return this;
      }
      return originalConnect.call(this, normalized);
    }
    const guarded = [
      { ...options, lookup: loopbackOnlyLookup(options.lookup ?? dns.lookup) },
      normalized[1],
    ];
    guarded[NORMALIZED] = true;
    return originalConnect.call(this, guarded);
  };
}

// ---- installing ---------------------------------------------------------------------------

/** Installs the guard in this process (idempotent). */
function install() {
  if (net[INSTALLED]) return;
  net[INSTALLED] = true;
  guardDns();
  guardNet();
}

/** `env` plus what makes a child Node process install the guard and report to this run. */
function childEnv(env = process.env) {
  const options = env.NODE_OPTIONS ?? '';
  const required = options.includes(REGISTER)
    ? options
    : `${options} --require "${REGISTER}"`.trim();
  return { ...env, NODE_OPTIONS: required };
}

/**
 * For a whole run (a Jest run's global setup, a benchmark, a script): installs the guard here,
 * makes every child Node process install it too, and gives the run a violation log. With
 * `exitCheck`, the process exits non-zero at the end if anything was refused anywhere.
 * Returns the log directory.
 */
function enforceForRun({ exitCheck = true } = {}) {
  install();
  if (!process.env[LOG_DIR_ENV]) {
    process.env[LOG_DIR_ENV] = fs.mkdtempSync(path.join(os.tmpdir(), 'platform-hermetic-'));
  }
  const dir = process.env[LOG_DIR_ENV];
  process.env.NODE_OPTIONS = childEnv(process.env).NODE_OPTIONS;
  if (exitCheck) {
    process.on('exit', () => {
      const entries = violationsIn(dir);
      if (entries.length > 0) {
        process.stderr.write(
          `\nhermetic: this run tried to reach outside loopback:\n${describeViolations(entries)}\n`,
        );
        process.exitCode = 1;
      }
    });
  }
  return dir;
}

module.exports = {
  TEST_HOST_ADDRESS,
  LOG_DIR_ENV,
  REGISTER,
  install,
  enforceForRun,
  childEnv,
  isLoopbackAddress,
  takeViolations,
  violationsIn,
  describeViolations,
};
