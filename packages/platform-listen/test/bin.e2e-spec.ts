/**
 * The standalone package's command, as `npx @platform/listen` runs it: its bin finds the SDK's
 * `platform-listen` and follows a real server's feed (the command itself is tested in
 * packages/client/cli/listen.spec.ts).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '@platform/server/testing';

const BIN = join(__dirname, '..', 'bin', 'platform-listen.js');

let server: TestServer;
let child: ChildProcess | undefined;

beforeAll(async () => {
  server = await startTestServer({
    postgresAdminUrl: process.env.TEST_DATABASE_URL,
    redisUrl: process.env.TEST_REDIS_URL,
  });
});

afterAll(async () => {
  child?.kill('SIGKILL');
  await server?.close();
});

function run(args: string[], env: Record<string, string>) {
  child = spawn(process.execPath, [BIN, ...args], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child!.once('exit', resolve));
  return { out: () => stdout, err: () => stderr, exited, process: child };
}

async function until(check: () => boolean, what: string, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

it('says how to use it, and exits 2, when told nowhere to send events', async () => {
  const listen = run([], { PLATFORM_TOKEN: 'pat_x', PLATFORM_URL: server.url });
  expect(await listen.exited).toBe(2);
  expect(listen.err()).toMatch(/--forward-to <url>, or --print-json/);
  expect(listen.err()).toMatch(/^Usage: platform-listen/m);
});

it("prints the organization's changes from the feed, and stops with 0 on SIGINT", async () => {
  const organization = await server.createOrganization();
  const { token } = await server.createToken(organization.id, ['all']);
  const created = await fetch(`${server.url}/v1/courses`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ code: 'LISTEN-1', title: 'Listening' }),
  });
  expect(created.status).toBe(201);
  const course = (await created.json()) as { id: string };

  const listen = run(['--print-json', '--after', 'oldest'], {
    PLATFORM_TOKEN: token,
    PLATFORM_URL: server.url,
  });
  await until(() => listen.out().includes(course.id), 'the course.created event');
  const events = listen
    .out()
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { type: string; data: { id: string } });
  expect(events.map((e) => e.type)).toContain('course.created');
  expect(events.find((e) => e.type === 'course.created')!.data.id).toBe(course.id);
  listen.process.kill('SIGINT');
  expect(await listen.exited).toBe(0);
  expect(listen.err()).toMatch(/--after \d+/);
});
