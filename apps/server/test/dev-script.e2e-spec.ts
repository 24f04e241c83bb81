/**
 * `pnpm dev`'s server script (scripts/dev.js) with its real compiler, server and Vite: the server
 * starts once and stays up while the portal's Vite writes its temporary config files, and
 * restarts when its own compiled code changes.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from '../src/testing';

const SERVER_ROOT = path.join(__dirname, '..');
const DEV_SCRIPT = path.join(SERVER_ROOT, 'scripts', 'dev.js');
const LISTENING = /Platform API listening on/g;
const RESTARTING = /Restarting '/g;

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
  });

  it('starts the server once and keeps it up while the portal (Vite) starts', async () => {
    // The portal's page makes Vite load its config (the temporary files under .vite-temp).
    const portal = await fetch(`${base}/portal/`);
    expect(portal.status).toBe(200);
    expect(await portal.text()).toContain('<div id="root"');
    await sleep(20_000);
    expect({ listening: count(LISTENING), restarts: count(RESTARTING) }).toEqual({
      listening: 1,
      restarts: 0,
    });
    expect((await fetch(`${base}/openapi.json`)).status).toBe(200);
  }, 60_000);

  it('restarts the server when its compiled code changes, then stops on Ctrl-C', async () => {
    const now = new Date();
    utimesSync(path.join(SERVER_ROOT, 'dist', 'main.js'), now, now);
    await until('the restart', () => count(LISTENING) >= 2, 30_000);
    expect(count(RESTARTING)).toBe(1);
    expect((await fetch(`${base}/openapi.json`)).status).toBe(200);

    const exited = new Promise<number | null>((resolve) => dev.once('exit', resolve));
    dev.kill('SIGINT');
    expect(await exited).not.toBeUndefined();
    // The server went with it: nothing listens on its port any more.
    await expect(fetch(`${base}/openapi.json`)).rejects.toThrow();
  }, 60_000);
});
