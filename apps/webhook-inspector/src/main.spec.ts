// The built entry point (dist/main.js, as `pnpm dev` and `pnpm start` run it), end to end: the
// start-up line, and the secret file read on every delivery. turbo builds before it tests.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { signWebhook } from '@platform/client';

const MAIN = path.join(__dirname, '..', 'dist', 'main.js');
const SECRET = `whsec_${Buffer.from('inspector-main-test-secret-bytes').toString('base64')}`;
const ROTATED = `whsec_${Buffer.from('inspector-main-test-rotated-byte').toString('base64')}`;

let dir: string;
let child: ChildProcess | undefined;

beforeAll(() => {
  if (!existsSync(MAIN)) {
    throw new Error(
      `${MAIN} is missing: run pnpm --filter @platform/webhook-inspector build first`,
    );
  }
});

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'webhook-inspector-main-'));
});

afterEach(async () => {
  if (child && child.exitCode === null) {
    const exited = new Promise((resolve) => child!.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }
  child = undefined;
  await rm(dir, { recursive: true, force: true });
});

/** Starts dist/main.js on a free port and resolves with its first line of output. */
function startMain(env: Record<string, string>): Promise<string> {
  const proc = spawn(process.execPath, [MAIN], {
    env: { PATH: process.env.PATH, INSPECTOR_PORT: '0', MAIL_CATCHER_PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child = proc;
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    proc.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
      const line = out.split('\n')[0];
      if (out.includes('\n') && line !== undefined) resolve(line);
    });
    proc.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
    proc.once('exit', (code) => reject(new Error(`exited with ${code}: ${err}`)));
  });
}

async function send(base: string, secret: string): Promise<Response> {
  const body = JSON.stringify({
    id: 'evt_01JD6Y3ZK8R5V2N3M4P5Q6R7S8',
    object: 'event',
    type: 'ping',
    timestamp: new Date().toISOString(),
    api_version: 'v1',
    data: { message: 'hello' },
  });
  const headers = await signWebhook(body, secret, { id: 'msg_main', timestamp: new Date() });
  return fetch(`${base}/webhooks`, { method: 'POST', headers, body });
}

it('prints where it listens and re-reads the secret file on every delivery', async () => {
  const secretFile = path.join(dir, 'webhook-inspector.secret');
  await writeFile(secretFile, `${SECRET}\n`);
  const line = await startMain({ INSPECTOR_SECRET_FILE: secretFile });
  expect(line).toMatch(
    /^Webhook inspector on http:\/\/127\.0\.0\.1:\d+ \(receives at POST \/webhooks\)$/,
  );
  const base = /(http:\/\/\S+)/.exec(line)![1]!;

  expect((await send(base, SECRET)).status).toBe(204);

  await writeFile(secretFile, `${ROTATED}\n`); // a re-seed wrote a new secret
  expect((await send(base, SECRET)).status).toBe(400);
  expect((await send(base, ROTATED)).status).toBe(204);

  await unlink(secretFile);
  const res = await send(base, ROTATED);
  expect(res.status).toBe(400);
  const answer = (await res.json()) as { error: string; reason: string };
  expect(answer.reason).toBe('no_secret');
  expect(answer.error).toContain(`The secret file ${secretFile} is missing`);
  const page = await (await fetch(`${base}/`)).text();
  expect(page).toContain(
    `<strong>Cannot verify:</strong> The secret file ${secretFile} is missing`,
  );
});

it('refuses a bad INSPECTOR_PORT with a message naming it', async () => {
  await expect(startMain({ INSPECTOR_PORT: 'http' })).rejects.toThrow(
    /exited with 1: Webhook inspector: INSPECTOR_PORT must be a port number/,
  );
});
