import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  at: number;
  /**
   * The request's path below the receiver's own prefix, so one receiver can stand for several
   * endpoints on one host:port.
   */
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** How the receiver answers one request: a status, optional headers/body, and a delay. */
export interface Reply {
  status: number;
  headers?: Record<string, string>;
  body?: string;
  delayMs?: number;
  /** Never answer (the dispatcher's timeout must end the attempt). */
  hang?: boolean;
}

/**
 * A real webhook receiver on loopback. `reply` decides each answer (default 204); every request
 * is kept with its exact raw body, so tests verify signatures on what went over the wire.
 *
 * Its URLs start with a prefix of its own. The port is the operating system's choice and may be
 * one an earlier test's receiver had: that test's endpoint may still be retrying it. Such a stray
 * request (outside the prefix) is answered 404 and never counted as this receiver's.
 */
export async function startReceiver(
  reply: (request: Received, index: number) => Reply = () => ({ status: 204 }),
) {
  const received: Received[] = [];
  const prefix = `/r-${randomBytes(6).toString('hex')}`;
  const sockets = new Set<import('node:net').Socket>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = req.url ?? '';
      if (!url.startsWith(`${prefix}/`)) {
        res.writeHead(404).end();
        return;
      }
      const request = {
        at: Date.now(),
        path: url.slice(prefix.length),
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      received.push(request);
      const answer = reply(request, received.length - 1);
      if (answer.hang) return;
      setTimeout(() => {
        res.writeHead(answer.status, answer.headers);
        res.end(answer.body);
      }, answer.delayMs ?? 0);
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const base = `http://127.0.0.1:${port}${prefix}`;
  return {
    url: `${base}/hooks`,
    /** Where this receiver's paths start: `${base}/anything` is one of its URLs. */
    base,
    received,
    /** Requests carrying this event type (parsed payloads). */
    ofType: (type: string) => received.filter((r) => JSON.parse(r.body).type === type),
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

export type Receiver = Awaited<ReturnType<typeof startReceiver>>;

export interface WaitOptions {
  timeoutMs?: number;
  intervalMs?: number;
  what?: string;
  /**
   * Says why the wait cannot succeed any more (say, the server logged that it could not sign or
   * send): the wait then fails at once with that reason instead of running out its time.
   */
  failFast?: () => string | undefined;
}

/** Polls `check` until it returns a truthy value, or fails after `timeoutMs` (or `failFast`). */
export async function waitFor<T>(
  check: () => T | Promise<T>,
  { timeoutMs = 10_000, intervalMs = 20, what = 'condition', failFast }: WaitOptions = {},
): Promise<Exclude<T, false | null | undefined>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as Exclude<T, false | null | undefined>;
    const hopeless = failFast?.();
    if (hopeless !== undefined) throw new Error(`Gave up waiting for ${what}: ${hopeless}`);
    if (Date.now() > deadline)
      throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
