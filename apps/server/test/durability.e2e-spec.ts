/**
 * A 2xx to a write means it is committed, also when the database fails under the server: a full
 * disk (SQLite) or an unreachable database (PostgreSQL) answers 503 with Retry-After, never 500
 * and never a 2xx for a write that did not commit, and the server recovers by itself once the
 * database can take writes again. Issue 30, defects 1 and 3.
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { TransactionRunner } from '../src/common/transactions';
import { prepareDatabase } from '../src/testing';
import { typedClient } from './support/api';
import { type Receiver, startReceiver, waitFor } from './support/receiver';
import { DATABASE_KIND, databaseOptions, startServer, type TestServer } from './support/server';

/** The part of better-sqlite3 used here (the server's own dependency, without type declarations). */
interface SqliteFile {
  prepare(sql: string): { all(): unknown[] };
  pragma(sql: string, options?: { simple: boolean }): unknown;
  close(): void;
}
// eslint-disable-next-line @typescript-eslint/no-require-imports
const Database = require('better-sqlite3') as new (file: string, options?: object) => SqliteFile;

interface Answer {
  key: string;
  body: { student_number: string; first_name: string; last_name: string };
  status: number;
  retryAfter: string | null;
  contentType: string | null;
  id?: string;
}

/** Writers posting students with keys as fast as they are answered, until `stop()`. */
function burst(server: TestServer, token: string, writers = 4) {
  const answers: Answer[] = [];
  let running = true;
  let n = 0;
  const loops = Array.from({ length: writers }, async () => {
    while (running) {
      const i = ++n;
      const key = randomUUID();
      const body = {
        student_number: `D-${i}-${key.slice(0, 8)}`,
        first_name: 'Ada',
        last_name: 'L',
      };
      const res = await typedClient(server, token).students.create({
        body,
        extraHeaders: { 'Idempotency-Key': key },
      });
      answers.push({
        key,
        body,
        status: res.status,
        retryAfter: res.headers.get('retry-after'),
        contentType: res.headers.get('content-type'),
        ...(res.status === 201 && { id: (res.body as { id: string }).id }),
      });
    }
  });
  return {
    answers,
    stop: async () => {
      running = false;
      await Promise.all(loops);
    },
  };
}

/**
 * The refused requests sent again under their keys once the database is back: each is now
 * answered 201, never a 409 for a key left "in progress" by the outage. A replay is right too:
 * a COMMIT the database made just as the connection went is a 503 to the client (the outcome
 * was unknown to the server), and the retry then finds the stored response.
 */
async function retryRefused(server: TestServer, token: string, answers: Answer[]) {
  const refused = answers.filter((a) => a.status !== 201);
  const statuses = [];
  for (const answer of refused.slice(0, 50)) {
    const res = await typedClient(server, token).students.create({
      body: answer.body,
      extraHeaders: { 'Idempotency-Key': answer.key },
    });
    statuses.push(res.status);
  }
  return statuses;
}

/** Every refusal is the documented 503: problem+json with Retry-After; never a 500. */
function expectOnlyDocumented503s(answers: Answer[]) {
  const refused = answers.filter((a) => a.status !== 201);
  expect(refused.length).toBeGreaterThan(0);
  for (const answer of refused) {
    expect(answer).toMatchObject({
      status: 503,
      retryAfter: expect.stringMatching(/^[1-9][0-9]*$/),
      contentType: expect.stringMatching(/^application\/problem\+json/),
    });
  }
}

async function ready(server: TestServer): Promise<number> {
  return (await fetch(`${server.url}/health/ready`)).status;
}

// The SQLite case runs its own database file in every run; the PostgreSQL case needs the run's
// PostgreSQL (TEST_DATABASE_URL) and is defined only then.
describe('SQLite on a full disk', () => {
  const asRoot = process.getuid?.() === 0;
  let dir: string;
  let file: string;
  let server: TestServer;
  let token: string;
  let receiver: Receiver;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'platform-full-'));
    // As root (CI): a real 8 MiB file system, filled with dd, so the failure is the kernel's
    // ENOSPC wherever SQLite meets it (a statement, the WAL at COMMIT). Otherwise SQLite's own
    // cap on the file's pages (max_page_count), which fails the same statements.
    if (asRoot) execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=8m', 'tmpfs', dir]);
    const template = await prepareDatabase({});
    file = path.join(dir, 'platform.sqlite');
    copyFileSync(template.databaseUrl.replace(/^sqlite:/, ''), file);
    await template.drop();
    receiver = await startReceiver();
    server = await startServer(
      {
        RATE_LIMIT_DEFAULT: '1000000',
        WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
        WEBHOOK_POLL_INTERVAL: '100ms',
      },
      { databaseUrl: `sqlite:${file}` },
    );
    const org = await server.createOrganization();
    ({ token } = await server.createToken(org.id, [
      'students:read',
      'students:write',
      'webhooks:write',
    ]));
    const endpoint = await typedClient(server, token).webhookEndpoints.create({
      body: { url: receiver.url, events: ['student.created'] },
    });
    expect(endpoint.status).toBe(201);
  });

  afterAll(async () => {
    await server?.close();
    await receiver?.close();
    if (asRoot) execFileSync('umount', ['-l', dir]);
    rmSync(dir, { recursive: true, force: true });
  });

  function fill(): void {
    if (asRoot) {
      try {
        execFileSync('dd', ['if=/dev/zero', `of=${path.join(dir, 'filler')}`, 'bs=4k'], {
          stdio: 'ignore',
        });
      } catch {
        // dd stops with "No space left on device": that is the point.
      }
    } else {
      const pages = server.dataSource.driver as unknown as {
        databaseConnection: SqliteFile;
      };
      const count = pages.databaseConnection.pragma('page_count', { simple: true }) as number;
      pages.databaseConnection.pragma(`max_page_count = ${count}`);
    }
  }

  function free(): void {
    if (asRoot) rmSync(path.join(dir, 'filler'), { force: true });
    else {
      const pages = server.dataSource.driver as unknown as {
        databaseConnection: SqliteFile;
      };
      pages.databaseConnection.pragma('max_page_count = 1073741823');
    }
  }

  it('answers 503 while full, acknowledges only what it committed, and recovers by itself', async () => {
    const writes = burst(server, token);
    await waitFor(() => writes.answers.filter((a) => a.status === 201).length >= 20);
    fill();
    await waitFor(() => writes.answers.filter((a) => a.status === 503).length >= 20, {
      what: '503s on a full disk',
    });
    expect(await ready(server)).toBe(503);
    // A transaction that only reads commits on a full disk too (a periodic job's sweep that finds
    // nothing to delete): it proves no space is back, so the server stays unready.
    const runner = server.app.get(TransactionRunner);
    await runner.run((manager) => manager.query('SELECT 1'));
    expect(runner.writeHealth.state).toBe('storage_full');
    expect(await ready(server)).toBe(503);
    const freedAt = Date.now();
    free();
    const countAtFree = writes.answers.length;
    await waitFor(
      () => writes.answers.slice(countAtFree).filter((a) => a.status === 201).length >= 20,
      { what: 'writes to succeed again once space is free', timeoutMs: 15_000 },
    );
    const recoverySeconds = (Date.now() - freedAt) / 1000;
    await writes.stop();

    expectOnlyDocumented503s(writes.answers);
    expect(recoverySeconds).toBeLessThan(5);
    expect(await ready(server)).toBe(200);
    const retried = await retryRefused(server, token, writes.answers);
    expect(retried.filter((status) => status !== 201)).toEqual([]);
    // Committed means another connection sees it: a second connection to the same file, as a
    // restart would open it.
    const acknowledged = writes.answers.flatMap((a) => (a.id ? [a.id] : []));
    const outside = new Database(file, { readonly: true });
    try {
      const stored = new Set(
        (outside.prepare('SELECT id FROM students').all() as { id: string }[]).map((r) => r.id),
      );
      expect(acknowledged.filter((id) => !stored.has(id))).toEqual([]);
      // Every webhook sent was for an event that exists.
      await new Promise((resolve) => setTimeout(resolve, 500));
      const events = new Set(
        (outside.prepare('SELECT id FROM events').all() as { id: string }[]).map((r) => r.id),
      );
      const sent = receiver.received.map((r) => (JSON.parse(r.body) as { id: string }).id);
      expect(sent.length).toBeGreaterThan(0);
      expect(sent.filter((id) => !events.has(id))).toEqual([]);
    } finally {
      outside.close();
    }
  });
});

/**
 * A TCP proxy in front of PostgreSQL that can be "unplugged": open connections are cut and new
 * ones refused, as when the database server stops, and "plugged" back on the same port.
 */
async function databaseProxy(target: { host: string; port: number }) {
  const sockets = new Set<net.Socket>();
  let listener: net.Server | undefined;
  const port = await new Promise<number>((resolve) => {
    const probe = net.createServer().listen(0, '127.0.0.1', () => {
      const { port: free } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(free));
    });
  });
  const plug = () =>
    new Promise<void>((resolve, reject) => {
      if (listener) return resolve();
      const server = net.createServer((client) => {
        const upstream = net.connect(target.port, target.host);
        for (const socket of [client, upstream]) {
          sockets.add(socket);
          socket.on('close', () => sockets.delete(socket));
          socket.on('error', () => undefined);
        }
        client.pipe(upstream).pipe(client);
      });
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        listener = server;
        resolve();
      });
    });
  const unplug = () =>
    new Promise<void>((resolve) => {
      const server = listener;
      listener = undefined;
      for (const socket of sockets) socket.destroy();
      if (server) server.close(() => resolve());
      else resolve();
    });
  await plug();
  return { port, plug, unplug };
}

(DATABASE_KIND === 'postgres' ? describe : () => undefined)('PostgreSQL unreachable', () => {
  let server: TestServer;
  let token: string;
  let proxy: Awaited<ReturnType<typeof databaseProxy>>;
  let database: Awaited<ReturnType<typeof prepareDatabase>>;

  beforeAll(async () => {
    database = await prepareDatabase(databaseOptions());
    const direct = new URL(database.databaseUrl);
    proxy = await databaseProxy({ host: direct.hostname, port: Number(direct.port) });
    const viaProxy = new URL(database.databaseUrl);
    viaProxy.host = `127.0.0.1:${proxy.port}`;
    server = await startServer(
      { RATE_LIMIT_DEFAULT: '1000000' },
      { databaseUrl: viaProxy.toString() },
    );
    const org = await server.createOrganization();
    ({ token } = await server.createToken(org.id, ['students:read', 'students:write']));
  });

  afterAll(async () => {
    await proxy?.plug().catch(() => undefined);
    await server?.close();
    await database?.drop();
  });

  it('answers 503 with Retry-After during the outage, never 500, and recovers by itself', async () => {
    const writes = burst(server, token);
    await waitFor(() => writes.answers.filter((a) => a.status === 201).length >= 20);
    await proxy.unplug();
    await waitFor(() => writes.answers.filter((a) => a.status === 503).length >= 20, {
      what: '503s while the database is unreachable',
    });
    expect(await ready(server)).toBe(503);
    const list = await typedClient(server, token).students.list({ query: {} });
    expect(list.status).toBe(503);
    expect(list.headers.get('retry-after')).toMatch(/^[1-9]/);
    const backAt = Date.now();
    await proxy.plug();
    const countAtBack = writes.answers.length;
    await waitFor(
      () => writes.answers.slice(countAtBack).filter((a) => a.status === 201).length >= 20,
      { what: 'writes to succeed again', timeoutMs: 15_000 },
    );
    const recoverySeconds = (Date.now() - backAt) / 1000;
    await writes.stop();

    expectOnlyDocumented503s(writes.answers);
    expect(recoverySeconds).toBeLessThan(5);
    expect(await ready(server)).toBe(200);
    const retried = await retryRefused(server, token, writes.answers);
    expect(retried.filter((status) => status !== 201)).toEqual([]);
    const acknowledged = writes.answers.flatMap((a) => (a.id ? [a.id] : []));
    const client = new Client({ connectionString: database.databaseUrl });
    await client.connect();
    try {
      const { rows } = await client.query<{ id: string }>('SELECT id FROM students');
      const stored = new Set(rows.map((r) => r.id));
      expect(acknowledged.filter((id) => !stored.has(id))).toEqual([]);
    } finally {
      await client.end();
    }
  });
});
