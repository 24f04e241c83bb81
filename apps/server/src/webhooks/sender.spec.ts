import { Clock } from '../common/clock';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseRetryAfter, WebhookSender } from './sender';

describe('WebhookSender', () => {
  const hits: string[] = [];
  let server: http.Server;
  let base: string;
  const sender = new WebhookSender({ allowPrivate: true }, 500, new Clock());

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      hits.push(req.url ?? '');
      req.resume();
      if (req.url === '/redirect') res.writeHead(302, { Location: '/target' }).end();
      else if (req.url === '/big') res.writeHead(500).end('é'.repeat(5000));
      else if (req.url === '/busy') res.writeHead(503, { 'Retry-After': '120' }).end();
      else if (req.url?.startsWith('/hang')) return;
      else if (req.url === '/endless') {
        // A 2xx whose body never ends: 64 KiB every 10 ms until the client goes.
        res.writeHead(200, { 'Content-Type': 'text/plain' });
        const chunk = 'x'.repeat(64 * 1024);
        const timer = setInterval(() => res.write(chunk), 10);
        res.on('close', () => clearInterval(timer));
      } else if (req.url === '/cut') {
        // A 2xx that promises 1000 bytes, sends 20, and drops the connection.
        res.writeHead(200, { 'Content-Length': '1000' });
        res.write('accepted, but then …');
        setTimeout(() => res.socket?.destroy(), 20);
      } else res.writeHead(200).end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    sender.close();
    await new Promise((resolve) => server.close(resolve));
  });

  const send = (pathname: string) =>
    sender.send({ url: `${base}${pathname}`, headers: {}, body: '{}' });

  it('does not follow a redirect: the 3xx is the (failed) answer', async () => {
    const result = await send('/redirect');
    expect(result.statusCode).toBe(302);
    expect(hits).not.toContain('/target');
  });

  it('keeps the first 4 KiB of a response body', async () => {
    const result = await send('/big');
    expect(Buffer.byteLength(result.responseBody!, 'utf8')).toBeLessThanOrEqual(4096);
    expect(result.responseBody!.startsWith('é'.repeat(2000))).toBe(true);
  });

  // Issue 30, defect 6: the status is the answer; the body is only read for the record.
  it('counts a 2xx whose body never ends as answered, keeping its first 4 KiB', async () => {
    const result = await send('/endless');

    expect(result).toMatchObject({ statusCode: 200, error: null });
    expect(result.responseBody).toBe('x'.repeat(4096));
    // Answered once 4 KiB were read, not when the 500 ms attempt timeout ran out.
    expect(result.latencyMs).toBeLessThan(400);
  });

  it('counts a 2xx whose body is cut off as answered', async () => {
    const result = await send('/cut');

    expect(result).toMatchObject({
      statusCode: 200,
      error: null,
      responseBody: 'accepted, but then …',
    });
  });

  it('reads Retry-After from a 503', async () => {
    expect((await send('/busy')).retryAfterMs).toBe(120_000);
    expect((await send('/ok')).retryAfterMs).toBeNull();
  });

  it('never queues an attempt behind slow requests to the same host:port (other endpoints, other tenants)', async () => {
    const slow = Array.from({ length: 12 }, (_, i) => send(`/hang-${i}`));
    await new Promise((resolve) => setTimeout(resolve, 50));
    const fast = await send('/ok');
    expect(fast).toMatchObject({ statusCode: 200, error: null });
    // Its own round trip on loopback, not the 500 ms the slow ones take to time out.
    expect(fast.latencyMs).toBeLessThan(250);
    for (const result of await Promise.all(slow)) expect(result.error).toMatch(/within 0.5 s/);
  });

  it('refuses plain http and private addresses unless allowed, without connecting', async () => {
    const strict = new WebhookSender({ allowPrivate: false }, 500, new Clock());
    const before = hits.length;
    expect((await strict.send({ url: `${base}/ok`, headers: {}, body: '{}' })).error).toMatch(
      /https/,
    );
    const literal = await strict.send({ url: 'https://127.0.0.1:1/ok', headers: {}, body: '{}' });
    expect(literal.statusCode).toBeNull();
    expect(literal.error).toMatch(/loopback/);
    expect(hits.length).toBe(before);
    strict.close();
  });
});

describe('parseRetryAfter', () => {
  it.each([
    { value: '30', expected: 30_000 },
    { value: ' 0 ', expected: 0 },
    { value: 'Thu, 01 Jan 1970 00:01:00 GMT', expected: 60_000 },
    { value: 'soon', expected: null },
    { value: undefined, expected: null },
  ])('$value → $expected', ({ value, expected }) => {
    expect(parseRetryAfter(value, 0)).toBe(expected);
  });
});
