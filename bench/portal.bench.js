'use strict';
/**
 * The portal's first load and each page's first render (issue 48), in Debian's Chromium through
 * playwright-core (the portal's own dev dependency), against the built server serving the built
 * portal (apps/portal/dist, or BENCH_PORTAL_DIST) on loopback. Each round, in a fresh browser
 * context (empty cache):
 *
 * 1. Sign-in page: a cold load of /portal/ signed out. Transfer = the encoded (compressed) body
 *    bytes of every response; time to interactive = navigation start until the page's heading and
 *    its Sign in button are there (React has rendered: the page is all client-side).
 * 2. Signs in (the OAuth page), then a cold load of /portal/tokens (HTTP cache cleared, session
 *    kept): its transfer (the portal's files, and the API's answers apart) and time until the
 *    tokens list has rendered.
 * 3. Each main page's first render, navigating in the app as a member does (a click in the
 *    navigation): from the click until the page's heading is up and no "Loading…" is left.
 *
 * Goal: the first page (sign-in, then tokens) transfers under 150 KiB of portal files. The
 * median of BENCH_ROUNDS (default 3) is reported; results in bench/results/portal.json.
 *
 *   pnpm --filter @platform/server build && pnpm --filter @platform/portal build
 *   node bench/portal.bench.js           (or BENCH_ONLY=portal pnpm bench)
 *
 * Knobs: BENCH_ROUNDS (default 3), BENCH_PORTAL_DIST (a portal build to serve, default
 * apps/portal/dist), BENCH_ENFORCE_GOALS=1 (exit 1 when the goal is missed).
 */
/* global document, history, dispatchEvent -- functions evaluated in the page */
// Loopback only: this run and every process it starts refuse any other address (tooling/hermetic).
require('@platform/hermetic').enforceForRun();
const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const { createRequire } = require('node:module');
const os = require('node:os');
const path = require('node:path');
const {
  CLI_MAIN,
  REPO_ROOT,
  SERVER_MAIN,
  configFromEnv,
  envNumber,
  freePort,
  serverNodeFlags,
  waitReady,
  writeResults,
} = require('./lib/harness');

const config = configFromEnv(() => ({
  rounds: envNumber('BENCH_ROUNDS', 3, { integer: true }),
  dist: process.env.BENCH_PORTAL_DIST || path.join(REPO_ROOT, 'apps', 'portal', 'dist'),
  enforceGoals: process.env.BENCH_ENFORCE_GOALS === '1',
}));
/** Issue 48: the first page, compressed, under 150 KiB. */
const GOAL_FIRST_LOAD_KIB = 150;
const CHROMIUM = '/usr/bin/chromium';
const EMAIL = 'bench@portal-bench.test';
const PASSWORD = 'correct horse battery staple';
/** The pages measured after sign-in: the navigation's label and the heading each one shows. */
const PAGES = [
  { name: 'webhooks', nav: 'Webhooks' },
  { name: 'webhook endpoint', nav: null },
  { name: 'usage', nav: 'Usage' },
  { name: 'request logs', nav: 'Request logs' },
  { name: 'audit log', nav: 'Audit log' },
  { name: 'tokens', nav: 'Tokens' },
  { name: 'oauth apps', nav: 'OAuth apps' },
  { name: 'members', nav: 'Members' },
  { name: 'exports', nav: 'Exports' },
  { name: 'organization', nav: 'Organization' },
  { name: 'account', nav: 'Account' },
];

const log = (message = '') => process.stdout.write(`${message}\n`);
const kib = (bytes) => bytes / 1024;
const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)];
};

const cleanups = [];
process.on('exit', () => {
  for (const cleanup of cleanups.reverse()) cleanup();
});
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => process.exit(130));

/** The server's own settings are never inherited from this process's environment. */
function childEnv(extra) {
  const env = { ...process.env };
  for (const key of Object.keys(env)) {
    if (
      /^(DATABASE_|REDIS_|WEBHOOK_|RATE_LIMIT_|PORT$|HOST$|LOG_LEVEL$|DEV_|METRICS_|PORTAL_)/.test(
        key,
      )
    )
      delete env[key];
  }
  return { ...env, NODE_ENV: 'production', ...extra };
}

function cli(databasePath, args, input) {
  const result = spawnSync(process.execPath, [CLI_MAIN, ...args, '--json'], {
    cwd: REPO_ROOT,
    env: childEnv({ DATABASE_URL: `sqlite:${databasePath}` }),
    encoding: 'utf8',
    input,
  });
  if (result.status !== 0) throw new Error(`cli ${args[0]} failed: ${result.stderr}`);
  return JSON.parse(result.stdout.slice(result.stdout.indexOf('{')));
}

async function startServer(databasePath, port) {
  const child = spawn(process.execPath, [...serverNodeFlags(), SERVER_MAIN], {
    cwd: REPO_ROOT,
    env: childEnv({
      DATABASE_URL: `sqlite:${databasePath}`,
      HOST: '127.0.0.1',
      PORT: String(port),
      LOG_LEVEL: 'warn',
      PORTAL_DIST_DIR: config.dist,
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      WEBHOOK_DISPATCHER: 'false',
    }),
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  cleanups.push(() => child.exitCode === null && child.kill('SIGTERM'));
  await waitReady(`http://127.0.0.1:${port}`);
  return child;
}

/** A school with a member to sign in as, a webhook endpoint and some traffic for the logs. */
function seed(databasePath) {
  cli(databasePath, ['migrate']);
  const seeded = cli(databasePath, ['seed', '--students', '200']);
  cli(
    databasePath,
    ['users:create', '--org', seeded.organization_id, '--email', EMAIL, '--password-stdin'],
    `${PASSWORD}\n`,
  );
  return seeded;
}

async function apiTraffic(base, token) {
  const call = async (method, url, body) => {
    const res = await fetch(`${base}${url}`, {
      method,
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: body ? JSON.stringify(body) : undefined,
    });
    if (!res.ok) throw new Error(`${method} ${url}: HTTP ${res.status} ${await res.text()}`);
    return res.json();
  };
  const endpoint = await call('POST', '/v1/webhook_endpoints', {
    url: 'http://127.0.0.1:9/bench',
    events: ['*'],
  });
  for (let i = 1; i <= 50; i++) await call('GET', `/v1/students?per_page=5&page=${i}`);
  return endpoint.id;
}

/** Debian's Chromium, loopback only (as apps/portal/test/browser.ts launches it). */
async function launchChromium() {
  if (!fs.existsSync(CHROMIUM))
    throw new Error(`${CHROMIUM} is missing: run scripts/browser-toolchain.sh`);
  const requireFromPortal = createRequire(path.join(REPO_ROOT, 'apps', 'portal', 'package.json'));
  const { chromium } = requireFromPortal('playwright-core');
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1',
      '--no-first-run',
      '--no-default-browser-check',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-default-apps',
      '--disable-sync',
      '--no-sandbox',
    ],
  });
}

/**
 * Every response's encoded (on-the-wire) body size from the DevTools protocol, split into the
 * portal's files and the API's answers, until `stop()`.
 */
async function transferMeter(page, base) {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Network.enable');
  const urls = new Map();
  const totals = { portal: 0, api: 0, files: 0 };
  cdp.on('Network.responseReceived', (e) => urls.set(e.requestId, e.response.url));
  cdp.on('Network.loadingFinished', (e) => {
    const url = urls.get(e.requestId) ?? '';
    if (!url.startsWith(base)) return;
    // encodedDataLength counts the headers too; the body as sent is what the goal is about.
    const body = e.encodedDataLength - (headerBytes.get(e.requestId) ?? 0);
    if (new URL(url).pathname.startsWith('/portal')) {
      totals.portal += body;
      totals.files += 1;
    } else totals.api += body;
  });
  const headerBytes = new Map();
  cdp.on('Network.responseReceivedExtraInfo', (e) =>
    headerBytes.set(e.requestId, Buffer.byteLength(e.headersText ?? '')),
  );
  return {
    clearCache: () => cdp.send('Network.clearBrowserCache'),
    reset: () => Object.assign(totals, { portal: 0, api: 0, files: 0 }),
    totals: () => ({ ...totals }),
  };
}

/**
 * ms since navigation start once `main` has a heading other than `previous` (the page navigated
 * away from) and nothing in it is still loading ("Loading…", aria-busy).
 */
function rendered(previous) {
  const main = document.querySelector('main');
  const heading = main && main.querySelector('h1');
  const text = heading ? heading.textContent.trim() : '';
  if (!text || text === previous) return false;
  const busy = [...main.querySelectorAll('p, [role="status"], [aria-busy="true"]')].some(
    (el) => el.getAttribute('aria-busy') === 'true' || /^Loading/.test(el.textContent.trim()),
  );
  return busy ? false : performance.now();
}

async function renderedAt(page, previous = null) {
  const handle = await page.waitForFunction(rendered, previous, {
    polling: 'raf',
    timeout: 30_000,
  });
  return handle.jsonValue();
}

async function oneRound(browser, base, endpointId) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  try {
    const page = await context.newPage();
    const meter = await transferMeter(page, base);
    // 1. The sign-in page, cold.
    await page.goto(`${base}/portal/`);
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    const signInTti = await renderedAt(page);
    const signIn = meter.totals();
    // 2. Sign in, then the tokens page cold (cache cleared; the session is in sessionStorage).
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/oauth\/interaction\//);
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${base}/portal/`);
    await renderedAt(page);
    await meter.clearCache();
    meter.reset();
    await page.goto(`${base}/portal/tokens`);
    const tokensTti = await renderedAt(page);
    const tokens = meter.totals();
    // 3. Each page as the navigation opens it, its code fetched on first use.
    const renders = {};
    for (const { name, nav } of PAGES) {
      const [started, previous] = await page.evaluate(() => [
        performance.now(),
        document.querySelector('main h1')?.textContent.trim() ?? null,
      ]);
      if (nav)
        await page
          .getByRole('navigation', { name: 'Portal' })
          .getByRole('link', { name: nav, exact: true })
          .click();
      else
        await page.evaluate((id) => {
          history.pushState(null, '', `/portal/webhooks/${id}`);
          dispatchEvent(new Event('portal:navigate'));
        }, endpointId);
      renders[name] = (await renderedAt(page, previous)) - started;
    }
    return { signInTti, signIn, tokensTti, tokens, renders };
  } finally {
    await context.close();
  }
}

function report(rounds) {
  const firstLoad = median(rounds.map((r) => r.signIn.portal + r.tokens.portal));
  const summary = {
    sign_in: {
      portal_kib: kib(median(rounds.map((r) => r.signIn.portal))),
      files: median(rounds.map((r) => r.signIn.files)),
      tti_ms: median(rounds.map((r) => r.signInTti)),
    },
    tokens_cold: {
      portal_kib: kib(median(rounds.map((r) => r.tokens.portal))),
      api_kib: kib(median(rounds.map((r) => r.tokens.api))),
      files: median(rounds.map((r) => r.tokens.files)),
      tti_ms: median(rounds.map((r) => r.tokensTti)),
    },
    first_load_kib: kib(firstLoad),
    first_render_ms: Object.fromEntries(
      PAGES.map(({ name }) => [name, median(rounds.map((r) => r.renders[name]))]),
    ),
  };
  const met =
    summary.tokens_cold.portal_kib < GOAL_FIRST_LOAD_KIB &&
    summary.sign_in.portal_kib < GOAL_FIRST_LOAD_KIB;
  const ms = (n) => `${n.toFixed(0)} ms`;
  log(`\nPortal first load (median of ${rounds.length}; encoded bytes of the portal's files)`);
  log(
    `  sign-in page, cold     ${summary.sign_in.portal_kib.toFixed(1).padStart(7)} KiB in ${summary.sign_in.files} files, interactive in ${ms(summary.sign_in.tti_ms)}`,
  );
  log(
    `  tokens page, cold      ${summary.tokens_cold.portal_kib.toFixed(1).padStart(7)} KiB in ${summary.tokens_cold.files} files (+ ${summary.tokens_cold.api_kib.toFixed(1)} KiB API), rendered in ${ms(summary.tokens_cold.tti_ms)}`,
  );
  log(`  goal: each under ${GOAL_FIRST_LOAD_KIB} KiB        ${met ? 'met' : 'MISSED'}`);
  log('First render after a click in the navigation (code fetched on first use)');
  for (const [name, value] of Object.entries(summary.first_render_ms))
    log(`  ${name.padEnd(22)} ${ms(value).padStart(8)}`);
  return { summary, met };
}

async function main() {
  for (const file of [SERVER_MAIN, CLI_MAIN, path.join(config.dist, 'index.html')])
    if (!fs.existsSync(file))
      throw new Error(
        `${file} is missing: pnpm --filter @platform/server build && pnpm --filter @platform/portal build`,
      );
  const tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'platform-portal-bench-'));
  cleanups.push(() => fs.rmSync(tmpDir, { recursive: true, force: true }));
  const databasePath = path.join(tmpDir, 'bench.sqlite');
  log(
    `Portal benchmark: ${config.rounds} rounds, serving ${path.relative(REPO_ROOT, config.dist) || config.dist}; Node ${process.version}, ${os.cpus().length} CPUs, load average ${os.loadavg()[0].toFixed(1)}`,
  );
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const seeded = seed(databasePath);
  const server = await startServer(databasePath, port);
  let browser;
  try {
    const endpointId = await apiTraffic(base, seeded.token);
    browser = await launchChromium();
    const rounds = [];
    for (let i = 0; i < config.rounds; i++) rounds.push(await oneRound(browser, base, endpointId));
    const { summary, met } = report(rounds);
    writeResults(path.join(__dirname, 'results', 'portal.json'), 'portal', {
      goal_first_load_kib: GOAL_FIRST_LOAD_KIB,
      met,
      ...summary,
    });
    if (config.enforceGoals && !met) process.exitCode = 1;
  } finally {
    // The server and the browser hold this process open until they are gone.
    await browser?.close();
    if (server.exitCode === null && server.signalCode === null) {
      const exited = new Promise((resolve) => server.once('exit', resolve));
      server.kill('SIGTERM');
      await exited;
    }
  }
}

main().catch((error) => {
  console.error(`BENCHMARK FAILED: ${error.stack ?? error.message}`);
  process.exit(1);
});
