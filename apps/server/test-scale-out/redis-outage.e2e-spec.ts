/**
 * Losing Redis: the instance turns unready and refuses API requests with 503 (the shared rate
 * limit cannot be checked, so nothing is served unlimited), then recovers by itself when Redis
 * comes back. Runs its own redis-server so it can stop and restart it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { prepareDatabase } from '../src/testing';
import { waitFor } from '../test/support/receiver';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { startInstances } = require('../../../scripts/scale-out.js') as {
  startInstances(options: {
    count: number;
    databaseUrl: string;
    redisUrl: string;
  }): Promise<{ urls: string[]; cli(...args: string[]): any; stop(): Promise<void> }>;
};

const postgresAdminUrl = process.env.TEST_DATABASE_URL;
if (!postgresAdminUrl) throw new Error('The scale-out suite needs TEST_DATABASE_URL');

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function startRedis(port: number): Promise<ChildProcess> {
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    {
      stdio: ['ignore', 'pipe', 'ignore'],
    },
  );
  return new Promise((resolve) => {
    child.stdout.on('data', (chunk: Buffer) => {
      if (/Ready to accept connections/.test(chunk.toString())) resolve(child);
    });
  });
}

describe('Redis outage', () => {
  let db: Awaited<ReturnType<typeof prepareDatabase>>;
  let redis: ChildProcess;
  let port: number;
  let cluster: Awaited<ReturnType<typeof startInstances>>;

  beforeAll(async () => {
    db = await prepareDatabase({ postgresAdminUrl });
    port = await freePort();
    redis = await startRedis(port);
    cluster = await startInstances({
      count: 1,
      databaseUrl: db.databaseUrl,
      redisUrl: `redis://127.0.0.1:${port}`,
    });
  });

  afterAll(async () => {
    await cluster?.stop();
    redis?.kill('SIGKILL');
    await db?.drop();
  });

  it('makes the instance unready and fails closed with 503, then recovers when Redis returns', async () => {
    const org = cluster.cli('orgs:create', '--name', 'Outage School');
    const { token } = cluster.cli(
      'tokens:create',
      '--org',
      org.id,
      '--name',
      'o',
      '--scopes',
      'all',
    );
    const [url] = cluster.urls;
    const students = () =>
      fetch(`${url}/v1/students`, { headers: { Authorization: `Bearer ${token}` } });
    const ready = async () => (await fetch(`${url}/health/ready`)).status;

    expect(await ready()).toBe(200);
    expect((await students()).status).toBe(200);

    redis.kill('SIGKILL');
    await waitFor(async () => (await ready()) === 503, { what: 'readiness to report Redis down' });
    const refused = await students();
    expect(refused.status).toBe(503);
    expect(refused.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(await refused.json()).toMatchObject({ status: 503, code: 'service_unavailable' });
    // Liveness is about the process, which is fine.
    expect((await fetch(`${url}/health/live`)).status).toBe(200);

    redis = await startRedis(port);
    await waitFor(async () => (await ready()) === 200, {
      timeoutMs: 15_000,
      what: 'readiness to recover',
    });
    expect((await students()).status).toBe(200);
  });
});
