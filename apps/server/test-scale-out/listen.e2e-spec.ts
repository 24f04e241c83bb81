/**
 * `platform-listen` (the SDK's command, as built) against two real server processes on one
 * PostgreSQL and one Redis, behind a round-robin balancer on loopback: its long-polls land on
 * either instance while changes commit on both, one instance is killed mid-run, and every change
 * reaches the local handler once, in feed order, with a signature the reference library accepts.
 * Needs TEST_DATABASE_URL and TEST_REDIS_URL (`.ci/run` provides both).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { prepareDatabase } from '../src/testing';
import { type Receiver, startReceiver, waitFor } from '../test/support/receiver';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { startInstances } = require('../../../scripts/scale-out.js') as {
  startInstances(options: { count: number; databaseUrl: string; redisUrl: string }): Promise<{
    urls: string[];
    cli(...args: string[]): any;
    kill(i: number, signal?: NodeJS.Signals): Promise<unknown>;
    stop(): Promise<void>;
  }>;
};

const postgresAdminUrl = process.env.TEST_DATABASE_URL;
const redisUrl = process.env.TEST_REDIS_URL;
if (!postgresAdminUrl || !redisUrl)
  throw new Error('The scale-out suite needs TEST_DATABASE_URL and TEST_REDIS_URL');

const LISTEN = path.join(__dirname, '..', '..', '..', 'packages', 'client', 'dist', 'listen.js');
const SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;

/** A load balancer without health checks: each request to the next instance, 502 if it is gone. */
async function roundRobin(upstreams: string[]): Promise<{ url: string; server: Server }> {
  let next = 0;
  const server = createServer((req, res) => {
    const target = new URL(req.url ?? '/', upstreams[next++ % upstreams.length]);
    const upstream = request(target, { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502).end();
      else res.destroy();
    });
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

describe('platform-listen across two instances', () => {
  let db: Awaited<ReturnType<typeof prepareDatabase>>;
  let cluster: Awaited<ReturnType<typeof startInstances>>;
  let balancer: Awaited<ReturnType<typeof roundRobin>>;
  let handler: Receiver;
  let listen: ChildProcess;
  let stderr = '';

  beforeAll(async () => {
    db = await prepareDatabase({ postgresAdminUrl });
    cluster = await startInstances({ count: 2, databaseUrl: db.databaseUrl, redisUrl });
    balancer = await roundRobin(cluster.urls);
    handler = await startReceiver();
  });

  afterAll(async () => {
    listen?.kill('SIGKILL');
    balancer?.server.closeAllConnections();
    balancer?.server.close();
    await handler?.close();
    await cluster?.stop();
    await db?.drop();
  });

  it('forwards every change committed on either instance once, in order, through an instance lost', async () => {
    const org = cluster.cli('orgs:create', '--name', 'Listen School');
    const { token } = cluster.cli(
      'tokens:create',
      '--org',
      org.id,
      '--name',
      'l',
      '--scopes',
      'all',
    );
    const write = async (instance: number, code: string) => {
      const res = await fetch(`${cluster.urls[instance]}/v1/courses`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ code, title: `Listen ${code}` }),
      });
      expect(res.status).toBe(201);
    };

    listen = spawn(
      process.execPath,
      [LISTEN, '--forward-to', handler.url, '--secret', SECRET, '--after', '0'],
      { env: { ...process.env, PLATFORM_URL: balancer.url, PLATFORM_TOKEN: token } },
    );
    listen.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    await waitFor(() => stderr.includes('Ready: '), { timeoutMs: 20_000, what: 'Ready' });

    for (let i = 0; i < 10; i += 1) await write(i % 2, `TWO-${i}`);
    await waitFor(() => handler.received.length === 10, {
      timeoutMs: 30_000,
      what: '10 deliveries',
    });
    await cluster.kill(0, 'SIGKILL');
    for (let i = 10; i < 20; i += 1) await write(1, `TWO-${i}`);
    await waitFor(() => handler.received.length >= 20, {
      timeoutMs: 60_000,
      what: '20 deliveries',
    });

    const feed = await fetch(`${cluster.urls[1]}/v1/changes?after=0&limit=1000`, {
      headers: { Authorization: `Bearer ${token}` },
    });
    const { data } = (await feed.json()) as { data: { id: string; position: number }[] };
    expect(data).toHaveLength(20);
    const verifier = new Webhook(SECRET.slice('whsec_'.length));
    const forwarded = handler.received.map(
      (r) =>
        verifier.verify(r.body, r.headers as Record<string, string>) as {
          id: string;
          position: number;
          previous_position: number | null;
        },
    );
    expect(forwarded.map((e) => [e.id, e.position])).toEqual(data.map((e) => [e.id, e.position]));
    expect(forwarded.map((e) => e.previous_position)).toEqual([
      null,
      ...data.slice(0, -1).map((e) => e.position),
    ]);
    // The instance lost was waited out, and the command said when it was through again.
    await waitFor(
      () => /The API did not answer .*502[^]*Caught up: every change to position/.test(stderr),
      {
        timeoutMs: 30_000,
        what: 'the retry and the catch-up',
      },
    );
  });
});
