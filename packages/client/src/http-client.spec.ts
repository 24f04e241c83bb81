/**
 * Retries, headers and failure modes, against small real HTTP servers on 127.0.0.1 that can
 * be told to answer 503, 429, drop the connection or hang (test/things.ts). Idempotency keys are
 * in http-client-idempotency.spec.ts.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { sendJson, sendProblem } from '../test/local-server';
import {
  closeServers,
  dropConnection,
  failThenSucceed,
  recordingSleep,
  sdk,
  serve,
  servers,
  testContract,
  thing,
  unavailable,
} from '../test/things';
import { createClientFor } from './client-for';
import {
  PlatformApiError,
  PlatformConnectionError,
  PlatformNotFoundError,
  PlatformRateLimitError,
  PlatformServerError,
  PlatformTimeoutError,
  VERSION,
} from './index';

afterEach(closeServers);

describe('createClientFor', () => {
  describe('requests', () => {
    it('sends the token, Accept, the SDK User-Agent after the app name, and extra headers', async () => {
      const server = await serve(failThenSucceed());

      await sdk(server, { userAgent: 'sis-sync/1.4', headers: { 'X-Tenant': 'north' } }).things.get(
        { params: { id: 'thg_1' } },
      );

      const { headers, path: requestPath } = server.requests[0]!;
      expect(requestPath).toBe('/v1/things/thg_1');
      expect(headers.authorization).toBe('Bearer pat_test');
      expect(headers.accept).toBe('application/json');
      expect(headers['user-agent']).toBe(`sis-sync/1.4 platform-client-node/${VERSION}`);
      expect(headers['x-tenant']).toBe('north');
    });

    it('reports the version of the package in User-Agent', () => {
      const pkg = JSON.parse(readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8')) as {
        version: string;
      };

      expect(VERSION).toBe(pkg.version);
    });

    it('sends a POST body as JSON and resolves to the 201 body', async () => {
      const server = await serve(failThenSucceed());

      const created = await sdk(server).things.create({ body: { name: 'Globe' } });

      expect(created).toEqual(thing);
      expect(server.requests[0]).toMatchObject({
        method: 'POST',
        path: '/v1/things',
        body: '{"name":"Globe"}',
      });
      expect(server.requests[0]!.headers['content-type']).toBe('application/json');
    });

    it('puts /api/v1 paths under a base URL that has a path of its own', async () => {
      const server = await serve(failThenSucceed());

      await sdk({ url: `${server.url}/platform/` }, { apiPrefix: '/api/v1' }).things.get({
        params: { id: 'thg_1' },
      });

      expect(server.requests[0]!.path).toBe('/platform/api/v1/things/thg_1');
    });

    it('gives any list route of any router an All method that walks the pages', async () => {
      const server = await serve((req, res) => {
        // As the API: no `page` is page 1.
        const page = Number(new URL(req.path, 'http://x').searchParams.get('page') ?? 1);
        const data =
          page <= 3
            ? [
                { id: `thg_${page}a`, name: 'a' },
                { id: `thg_${page}b`, name: 'b' },
              ]
            : [];
        sendJson(res, 200, {
          data,
          meta: { page, per_page: 2, total: 6, total_pages: 3, total_exact: true },
          links: { next: page < 3 ? 'next' : null },
        });
      });

      const ids: string[] = [];
      for await (const item of sdk(server).things.listAll({ per_page: 2 })) ids.push(item.id);

      expect(ids).toEqual(['thg_1a', 'thg_1b', 'thg_2a', 'thg_2b', 'thg_3a', 'thg_3b']);
      expect(server.requests).toHaveLength(3);
    });

    it('refuses to start without a token, with a message that says what to pass', () => {
      expect(() =>
        createClientFor(testContract, { baseUrl: 'http://127.0.0.1:1', token: '' }),
      ).toThrow(/token.*personal access token/);
    });
  });

  describe('rate limits (429)', () => {
    it('waits Retry-After seconds, then retries and succeeds', async () => {
      const server = await serve(
        failThenSucceed((_req, res) =>
          sendProblem(res, 429, 'rate_limited', { 'retry-after': '1' }),
        ),
      );

      const result = await sdk(server).things.get({ params: { id: 'thg_1' } });

      expect(result).toEqual(thing);
      expect(server.requests).toHaveLength(2);
      expect(server.requests[1]!.at - server.requests[0]!.at).toBeGreaterThanOrEqual(950);
    });

    it('understands Retry-After given as an HTTP date', async () => {
      const at = new Date(Date.now() + 30_000).toUTCString();
      const server = await serve(
        failThenSucceed((_req, res) =>
          sendProblem(res, 429, 'rate_limited', { 'retry-after': at }),
        ),
      );
      const { waits, sleep } = recordingSleep();

      await sdk(server, { sleep }).things.get({ params: { id: 'thg_1' } });

      expect(waits).toHaveLength(1);
      expect(waits[0]).toBeGreaterThan(27_000);
      expect(waits[0]).toBeLessThanOrEqual(30_000);
    });

    it('retries a POST too, since a 429 means it was not processed', async () => {
      const server = await serve(
        failThenSucceed((_req, res) =>
          sendProblem(res, 429, 'rate_limited', { 'retry-after': '0' }),
        ),
      );

      await expect(sdk(server).things.create({ body: { name: 'Globe' } })).resolves.toEqual(thing);
      expect(server.requests).toHaveLength(2);
    });

    it('throws PlatformRateLimitError with retryAfter once maxRetries are used up', async () => {
      const server = await serve((_req, res) =>
        sendProblem(res, 429, 'rate_limited', { 'retry-after': '7' }),
      );
      const { waits, sleep } = recordingSleep();

      const error = await sdk(server, { maxRetries: 3, sleep })
        .things.get({ params: { id: 'thg_1' } })
        .catch((e: unknown) => e);

      expect(error).toBeInstanceOf(PlatformRateLimitError);
      expect((error as PlatformRateLimitError).retryAfter).toBe(7);
      expect(server.requests).toHaveLength(4);
      expect(waits).toEqual([7000, 7000, 7000]);
    });
    it('stops waiting for Retry-After as soon as the caller aborts', async () => {
      const controller = new AbortController();
      const server = await serve((_req, res) => {
        sendProblem(res, 429, 'rate_limited', { 'retry-after': '30' });
        setTimeout(() => controller.abort(), 100);
      });

      const started = performance.now();
      const error = await sdk(server)
        .things.get({ params: { id: 'thg_1' }, fetchOptions: { signal: controller.signal } })
        .catch((e: unknown) => e);

      expect((error as Error).name).toBe('AbortError');
      expect(performance.now() - started).toBeLessThan(5000);
      expect(server.requests).toHaveLength(1);
    });
  });

  describe('server errors (5xx)', () => {
    it('retries a GET after a 503 with growing, jittered backoff and succeeds', async () => {
      const server = await serve(failThenSucceed(unavailable, unavailable));
      const { waits, sleep } = recordingSleep();

      const result = await sdk(server, { sleep, initialRetryDelayMs: 100 }).things.get({
        params: { id: 'thg_1' },
      });

      expect(result).toEqual(thing);
      expect(server.requests).toHaveLength(3);
      expect(waits[0]).toBeGreaterThanOrEqual(50);
      expect(waits[0]).toBeLessThanOrEqual(100);
      expect(waits[1]).toBeGreaterThanOrEqual(100);
      expect(waits[1]).toBeLessThanOrEqual(200);
    });

    it('never waits longer than maxRetryDelayMs', async () => {
      const server = await serve(
        failThenSucceed(unavailable, unavailable, unavailable, unavailable),
      );
      const { waits, sleep } = recordingSleep();

      await sdk(server, {
        sleep,
        maxRetries: 4,
        initialRetryDelayMs: 1000,
        maxRetryDelayMs: 1500,
      }).things.get({ params: { id: 'thg_1' } });

      expect(waits).toHaveLength(4);
      expect(Math.max(...waits)).toBeLessThanOrEqual(1500);
    });

    it('throws PlatformServerError with the problem once retries are used up', async () => {
      const server = await serve(unavailable);
      const { sleep } = recordingSleep();

      const error = await sdk(server, { sleep })
        .things.get({ params: { id: 'thg_1' } })
        .catch((e: unknown) => e);

      expect(error).toBeInstanceOf(PlatformServerError);
      expect(error).toMatchObject({
        status: 503,
        code: 'service_unavailable',
        requestId: 'req_local',
        detail: 'local service_unavailable',
      });
      expect(server.requests).toHaveLength(3);
    });

    it('does not retry a POST without an Idempotency-Key (idempotencyKeys: false)', async () => {
      const server = await serve(failThenSucceed(unavailable));
      const { waits, sleep } = recordingSleep();

      await expect(
        sdk(server, { sleep, idempotencyKeys: false }).things.create({ body: { name: 'Globe' } }),
      ).rejects.toBeInstanceOf(PlatformServerError);
      expect(server.requests).toHaveLength(1);
      expect(server.requests[0]!.headers['idempotency-key']).toBeUndefined();
      expect(waits).toEqual([]);
    });

    it('retries a POST that carries an Idempotency-Key, sending the same key and body again', async () => {
      const server = await serve(failThenSucceed(unavailable));
      const { sleep } = recordingSleep();

      const created = await sdk(server, { sleep }).things.create({
        body: { name: 'Globe' },
        extraHeaders: { 'Idempotency-Key': 'create-globe-1' },
      });

      expect(created).toEqual(thing);
      expect(server.requests.map((r) => [r.method, r.headers['idempotency-key'], r.body])).toEqual([
        ['POST', 'create-globe-1', '{"name":"Globe"}'],
        ['POST', 'create-globe-1', '{"name":"Globe"}'],
      ]);
    });

    it('describes a 5xx that is not a problem document (a proxy page)', async () => {
      const server = await serve((_req, res) => {
        res.writeHead(502, { 'content-type': 'text/html' });
        res.end('<h1>Bad Gateway</h1>');
      });

      const error = await sdk(server, { maxRetries: 0 })
        .things.get({ params: { id: 'thg_1' } })
        .catch((e: unknown) => e);

      expect(error).toBeInstanceOf(PlatformServerError);
      expect(error).toMatchObject({
        status: 502,
        code: undefined,
        problem: undefined,
        body: '<h1>Bad Gateway</h1>',
      });
      expect((error as PlatformServerError).detail).toContain('Bad Gateway');
    });
  });
  describe('client errors', () => {
    it('does not retry a 404 and throws PlatformNotFoundError', async () => {
      const server = await serve((_req, res) => sendProblem(res, 404, 'not_found'));
      const { sleep } = recordingSleep();

      const error = await sdk(server, { sleep })
        .things.get({ params: { id: 'thg_9' } })
        .catch((e: unknown) => e);

      expect(error).toBeInstanceOf(PlatformNotFoundError);
      expect(error).toBeInstanceOf(PlatformApiError);
      expect(server.requests).toHaveLength(1);
    });
  });

  describe('network failures', () => {
    it('retries a GET whose connection dropped, then succeeds', async () => {
      const server = await serve(failThenSucceed(dropConnection));
      const { sleep } = recordingSleep();

      await expect(sdk(server, { sleep }).things.get({ params: { id: 'thg_1' } })).resolves.toEqual(
        thing,
      );
      expect(server.requests).toHaveLength(2);
    });

    it('throws PlatformConnectionError for a POST without a key whose connection dropped, without retrying', async () => {
      const server = await serve(failThenSucceed(dropConnection));
      const { sleep } = recordingSleep();

      const error = await sdk(server, { sleep, idempotencyKeys: false })
        .things.create({ body: { name: 'Globe' } })
        .catch((e: unknown) => e);

      expect(error).toBeInstanceOf(PlatformConnectionError);
      expect(error).not.toBeInstanceOf(PlatformApiError);
      expect(error).toMatchObject({ method: 'POST', url: `${server.url}/v1/things` });
      expect(server.requests).toHaveLength(1);
    });

    it('throws PlatformConnectionError naming the cause when nothing listens', async () => {
      const server = await serve(failThenSucceed());
      const url = server.url;
      await servers.splice(0)[0]!.close();
      const { waits, sleep } = recordingSleep();

      const error = await sdk({ url }, { sleep })
        .things.get({ params: { id: 'thg_1' } })
        .catch((e: unknown) => e);

      expect(error).toBeInstanceOf(PlatformConnectionError);
      expect((error as Error).message).toContain('ECONNREFUSED');
      expect(waits).toHaveLength(2);
    });

    it('throws PlatformTimeoutError when no response arrives within timeoutMs', async () => {
      const server = await serve(() => undefined);

      const started = performance.now();
      const error = await sdk(server, { timeoutMs: 200, maxRetries: 0 })
        .things.get({ params: { id: 'thg_1' } })
        .catch((e: unknown) => e);

      expect(error).toBeInstanceOf(PlatformTimeoutError);
      expect(error).toBeInstanceOf(PlatformConnectionError);
      expect(performance.now() - started).toBeLessThan(2000);
    });

    it("rejects with the caller's abort reason and does not retry an aborted request", async () => {
      const controller = new AbortController();
      const server = await serve(() => controller.abort());

      const error = await sdk(server)
        .things.get({ params: { id: 'thg_1' }, fetchOptions: { signal: controller.signal } })
        .catch((e: unknown) => e);

      expect(error).toBe(controller.signal.reason);
      expect((error as Error).name).toBe('AbortError');
      expect(server.requests).toHaveLength(1);
    });
  });
});
