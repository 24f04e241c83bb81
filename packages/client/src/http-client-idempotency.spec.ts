/**
 * Idempotency keys: every POST gets one, and a keyed request is retried like a GET, against small
 * real HTTP servers on 127.0.0.1 (test/things.ts).
 */
import { sendJson, sendProblem } from '../test/local-server';
import {
  closeServers,
  dropConnection,
  failThenSucceed,
  recordingSleep,
  sdk,
  serve,
  thing,
  unavailable,
} from '../test/things';
import { newIdempotencyKey } from './http-client';
import { PlatformConflictError, PlatformServerError } from './index';

afterEach(closeServers);

describe('createClientFor', () => {
  describe('idempotency keys', () => {
    const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

    it('gives every POST its own generated Idempotency-Key', async () => {
      const server = await serve(failThenSucceed());

      await sdk(server).things.create({ body: { name: 'Globe' } });
      await sdk(server).things.create({ body: { name: 'Globe' } });

      const [first, second] = server.requests.map((r) => r.headers['idempotency-key']);
      expect(first).toMatch(UUID);
      expect(second).toMatch(UUID);
      expect(second).not.toBe(first);
    });

    it('retries a POST after a 503 with the same generated key and body', async () => {
      const server = await serve(failThenSucceed(unavailable, unavailable));
      const { sleep } = recordingSleep();

      await expect(
        sdk(server, { sleep }).things.create({ body: { name: 'Globe' } }),
      ).resolves.toEqual(thing);

      expect(server.requests).toHaveLength(3);
      const keys = new Set(server.requests.map((r) => r.headers['idempotency-key']));
      expect(keys.size).toBe(1);
      expect([...keys][0]).toMatch(UUID);
      expect(server.requests.map((r) => r.body)).toEqual(Array(3).fill('{"name":"Globe"}'));
    });

    it('retries a POST whose connection dropped with the same generated key', async () => {
      const server = await serve(failThenSucceed(dropConnection));
      const { sleep } = recordingSleep();

      await expect(
        sdk(server, { sleep }).things.create({ body: { name: 'Globe' } }),
      ).resolves.toEqual(thing);

      expect(server.requests).toHaveLength(2);
      expect(server.requests[1]!.headers['idempotency-key']).toBe(
        server.requests[0]!.headers['idempotency-key'],
      );
    });

    it('keeps a key the caller chose, in any letter case, instead of generating one', async () => {
      const server = await serve(failThenSucceed());

      await sdk(server, { headers: { 'IDEMPOTENCY-KEY': 'from-options' } }).things.create({
        body: { name: 'Globe' },
      });
      await sdk(server).things.create({
        body: { name: 'Globe' },
        extraHeaders: { 'idempotency-key': 'from-call' },
      });

      expect(server.requests.map((r) => r.headers['idempotency-key'])).toEqual([
        'from-options',
        'from-call',
      ]);
    });

    it('sends no key with a GET or a PATCH, and does not retry the PATCH', async () => {
      const server = await serve((req, res, index) =>
        index === 1 ? unavailable(req, res, index) : sendJson(res, 200, thing),
      );
      const { sleep } = recordingSleep();

      await sdk(server, { sleep }).things.get({ params: { id: 'thg_1' } });
      await expect(
        sdk(server, { sleep }).things.update({ params: { id: 'thg_1' }, body: { name: 'Atlas' } }),
      ).rejects.toBeInstanceOf(PlatformServerError);

      expect(server.requests.map((r) => [r.method, r.headers['idempotency-key']])).toEqual([
        ['GET', undefined],
        ['PATCH', undefined],
      ]);
    });

    it('waits out a 409 with Retry-After (an earlier attempt still running), then gets the response', async () => {
      const server = await serve(
        failThenSucceed((_req, res) => sendProblem(res, 409, 'conflict', { 'retry-after': '1' })),
      );
      const { waits, sleep } = recordingSleep();

      await expect(
        sdk(server, { sleep }).things.create({ body: { name: 'Globe' } }),
      ).resolves.toEqual(thing);
      expect(waits).toEqual([1000]);
      expect(server.requests[1]!.headers['idempotency-key']).toBe(
        server.requests[0]!.headers['idempotency-key'],
      );
    });

    it('makes version 4 UUIDs from getRandomValues where randomUUID is missing (plain-http pages)', async () => {
      const real = globalThis.crypto;
      const use = (value: unknown) =>
        Object.defineProperty(globalThis, 'crypto', { value, configurable: true, writable: true });
      try {
        use({ getRandomValues: (a: Uint8Array) => real.getRandomValues(a) });
        const keys = [await newIdempotencyKey(), await newIdempotencyKey()];
        expect(keys[0]).toMatch(UUID);
        expect(keys[1]).toMatch(UUID);
        expect(keys[1]).not.toBe(keys[0]);
      } finally {
        use(real);
      }
    });

    it("takes node:crypto's Web Crypto where Node has no global crypto (Node 18)", async () => {
      const real = globalThis.crypto;
      Object.defineProperty(globalThis, 'crypto', {
        value: undefined,
        configurable: true,
        writable: true,
      });
      try {
        const keys = [await newIdempotencyKey(), await newIdempotencyKey()];
        expect(keys[0]).toMatch(UUID);
        expect(keys[1]).not.toBe(keys[0]);
      } finally {
        Object.defineProperty(globalThis, 'crypto', {
          value: real,
          configurable: true,
          writable: true,
        });
      }
    });

    it('does not retry any other 409', async () => {
      const server = await serve(failThenSucceed((_req, res) => sendProblem(res, 409, 'conflict')));
      const { sleep } = recordingSleep();

      await expect(
        sdk(server, { sleep }).things.create({ body: { name: 'Globe' } }),
      ).rejects.toBeInstanceOf(PlatformConflictError);
      expect(server.requests).toHaveLength(1);
    });
  });
});
