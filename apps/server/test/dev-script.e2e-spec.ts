/**
 * `pnpm dev`'s server script (scripts/dev.js) with its real compiler, server and Vite: the server
 * starts once and stays up while the portal's Vite writes its temporary config files and a cached
 * build rewrites dist/ with the same bytes, and restarts when its compiled code changes.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from '../src/testing';

const SERVER_ROOT = path.join(__dirname, '..');
const DEV_SCRIPT = path.join(SERVER_ROOT, 'scripts', 'dev.js');
const LISTENING = /Platform API listening on/g;
const RESTARTING = /Restarting '/g;
/** Written into dist/ by the restart test, removed after. */
const probe = path.join(SERVER_ROOT, 'dist', `dev-script-probe-${process.pid}.js`);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('pnpm dev (scripts/dev.js)', () => {
  let dir: string;
  let dev: ChildProcess;
  let output = '';
  let base: string;

  const count = (pattern: RegExp) => output.match(pattern)?.length ?? 0;

  async function until(what: string, done: () => boolean, ms = 60_000): Promise<void> {
    const deadline = Date.now() + ms;
    while (!done()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}:\n${output}`);
      if (dev.exitCode !== null) throw new Error(`pnpm dev exited waiting for ${what}:\n${output}`);
      await sleep(100);
    }
  }

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'platform-dev-'));
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    // The real node binary: the node_modules/.bin/node shim would not pass the signal on.
    dev = spawn(process.execPath, [DEV_SCRIPT], {
      cwd: SERVER_ROOT,
      env: {
        ...process.env,
        PORT: String(port),
        // A fresh database: SQLite migrates it at start, as on a fresh clone.
        DATABASE_URL: `sqlite:${path.join(dir, 'platform.sqlite')}`,
        // The demo seed writes data/dev-token and friends in the checkout; not from a test.
        DEV_BOOTSTRAP: 'false',
        WEBHOOK_DISPATCHER: 'false',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    dev.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    dev.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    await until('the server to listen', () => count(LISTENING) >= 1);
  }, 90_000);

  afterAll(async () => {
    if (dev.exitCode === null) {
      const exited = new Promise((resolve) => dev.once('exit', resolve));
      dev.kill('SIGINT');
      await Promise.race([exited, sleep(10_000)]);
      if (dev.exitCode === null) dev.kill('SIGKILL');
    }
    rmSync(dir, { recursive: true, force: true });
    rmSync(probe, { force: true });
  });

  it('starts the server once and keeps it up while the portal (Vite) starts and a cached build rewrites dist/', async () => {
    // The portal's page makes Vite load its config (the temporary files under .vite-temp).
    const portal = await fetch(`${base}/portal/`);
    expect(portal.status).toBe(200);
    expect(await portal.text()).toContain('<div id="root"');
    // What a cached turbo build (`pnpm platform …` in another terminal) does: the same bytes again.
    const main = path.join(SERVER_ROOT, 'dist', 'main.js');
    writeFileSync(main, readFileSync(main));
    await sleep(20_000);
    expect({ listening: count(LISTENING), restarts: count(RESTARTING) }).toEqual({
      listening: 1,
      restarts: 0,
    });
    expect((await fetch(`${base}/openapi.json`)).status).toBe(200);
  }, 60_000);

  it('restarts the server when its compiled code changes, then stops on Ctrl-C', async () => {
    // A file the compiler added: the code changed (a file of its own, so nothing else sees it).
    // A request still arriving: the old server waits for it to finish while it shuts down.
    const inFlight = connect(Number(new URL(base).port), '127.0.0.1');
    inFlight.on('error', () => undefined);
    inFlight.write('POST /v1/students HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{');
    await sleep(200);
    writeFileSync(probe, `// ${randomUUID()}\n`);
    await until('the restart', () => count(RESTARTING) >= 1, 10_000);
    // A second change while that restart waits for the old server to exit: it is folded into
    // it, so one server holds the port in the end (never two: one failing with EADDRINUSE, one
    // left running).
    await sleep(1000);
    writeFileSync(probe, `// ${randomUUID()}\n`);
    await until('the restart', () => count(LISTENING) >= 2, 30_000);
    inFlight.destroy();
    await sleep(2000);
    expect(count(RESTARTING)).toBe(1);
    expect(output).not.toContain('EADDRINUSE');
    expect((await fetch(`${base}/openapi.json`)).status).toBe(200);

    const exited = new Promise<number | null>((resolve) => dev.once('exit', resolve));
    dev.kill('SIGINT');
    expect(await exited).not.toBeUndefined();
    // The server went with it: nothing listens on its port any more.
    await expect(fetch(`${base}/openapi.json`)).rejects.toThrow();
  }, 60_000);
});
