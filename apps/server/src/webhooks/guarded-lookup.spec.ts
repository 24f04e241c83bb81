/**
 * guardedLookup, the resolver the webhook agents use: every address it hands over has passed the
 * URL policy (url-guard.spec.ts covers the policy and the checks at registration).
 */
import type dns from 'node:dns';
import http from 'node:http';
import type net from 'node:net';
import { guardedLookup, type UrlPolicy, WebhookUrlError } from './url-guard';

const strict: UrlPolicy = { allowPrivate: false };
const dev: UrlPolicy = { allowPrivate: true };

const PUBLIC_V4 = '93.184.216.34';
const PUBLIC_V6 = '2606:2800:220:1:248:1893:25c8:1946';

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | dns.LookupAddress[],
  family?: number,
) => void;

/**
 * A stand-in for dns.lookup that answers every hostname with `answer` (or fails with it), in the
 * shape the caller asks for, and records the options it was called with.
 */
function fakeLookup(answer: string[] | NodeJS.ErrnoException) {
  const calls: dns.LookupOptions[] = [];
  const impl = (hostname: string, options: dns.LookupOptions, callback: LookupCallback): void => {
    calls.push(options);
    setImmediate(() => {
      if (answer instanceof Error) return callback(answer, options.all ? [] : '');
      const addresses = answer.map((address) => ({
        address,
        family: address.includes(':') ? 6 : 4,
      }));
      if (options.all) callback(null, addresses);
      else callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  };
  return { impl: impl as unknown as typeof dns.lookup, calls };
}

interface LookupResult {
  err: NodeJS.ErrnoException | null;
  address: string | dns.LookupAddress[];
  family?: number;
}

function callLookup(
  lookup: net.LookupFunction,
  hostname: string,
  options: dns.LookupOptions,
): Promise<LookupResult> {
  return new Promise((resolve) => {
    lookup(hostname, options, (err, address, family) => resolve({ err, address, family }));
  });
}

describe(guardedLookup.name, () => {
  it('hands over every checked address when called with all: true', async () => {
    const { impl } = fakeLookup([PUBLIC_V6, PUBLIC_V4]);
    const result = await callLookup(guardedLookup(strict, impl), 'hooks.example.com', {
      all: true,
    });
    expect(result.err).toBeNull();
    expect(result.address).toEqual([
      { address: PUBLIC_V6, family: 6 },
      { address: PUBLIC_V4, family: 4 },
    ]);
  });

  it('hands over the first address and its family when called without all', async () => {
    const { impl, calls } = fakeLookup([PUBLIC_V4, PUBLIC_V6]);
    const result = await callLookup(guardedLookup(strict, impl), 'hooks.example.com', {
      family: 4,
      hints: 1024,
    });
    expect(result).toEqual({ err: null, address: PUBLIC_V4, family: 4 });
    // It asked for all addresses (to check them all) and kept the caller's other options.
    expect(calls).toEqual([{ family: 4, hints: 1024, all: true }]);
  });

  it.each([
    { shape: 'all: true', options: { all: true } },
    { shape: 'all: false', options: { all: false } },
    { shape: 'no all', options: {} },
  ])('refuses a rebinding to a private address ($shape)', async ({ options }) => {
    const { impl } = fakeLookup([PUBLIC_V4, '10.0.0.5']);
    const result = await callLookup(guardedLookup(strict, impl), 'rebind.example.com', options);
    expect(result.err).toBeInstanceOf(WebhookUrlError);
    expect(result.err).toMatchObject({
      code: 'EWEBHOOKBLOCKED',
      message:
        'Webhook URL host rebind.example.com resolves to 10.0.0.5, a private address; webhooks go to public addresses only',
    });
  });

  it.each([{ address: '127.0.0.1' }, { address: '::1' }, { address: '169.254.169.254' }])(
    'refuses $address with EWEBHOOKBLOCKED',
    async ({ address }) => {
      const { impl } = fakeLookup([address]);
      const result = await callLookup(guardedLookup(strict, impl), 'x.example.com', { all: true });
      expect(result.err?.code).toBe('EWEBHOOKBLOCKED');
    },
  );

  it('passes lookup errors through', async () => {
    const notFound = Object.assign(new Error('getaddrinfo ENOTFOUND x'), { code: 'ENOTFOUND' });
    const { impl } = fakeLookup(notFound);
    const result = await callLookup(guardedLookup(strict, impl), 'x.example.com', {});
    expect(result.err).toBe(notFound);
  });

  it('fails rather than hand over an empty address list', async () => {
    const { impl } = fakeLookup([]);
    const result = await callLookup(guardedLookup(strict, impl), 'x.example.com', { all: true });
    expect(result.err).toMatchObject({
      code: 'ENOTFOUND',
      message: 'x.example.com did not resolve to any address',
    });
  });

  it('uses the system lookup by default: localhost is refused, a public name handed over', async () => {
    const refused = await callLookup(guardedLookup(strict), 'localhost', { all: true });
    expect(refused.err).toMatchObject({
      code: 'EWEBHOOKBLOCKED',
      message:
        'Webhook URL host localhost resolves to 127.0.0.1, a loopback address; webhooks go to public addresses only',
    });
    const allowed = await callLookup(guardedLookup(strict), 'hooks.example.test', {});
    expect(allowed).toEqual({ err: null, address: '3ffe:ffff::7e57', family: 6 });
  });

  it('just delegates under allowPrivate', async () => {
    const { impl, calls } = fakeLookup(['127.0.0.1']);
    const result = await callLookup(guardedLookup(dev, impl), 'localhost', {});
    expect(result).toEqual({ err: null, address: '127.0.0.1', family: 4 });
    expect(calls).toEqual([{}]);
  });

  describe('in a real http.Agent, against a loopback server', () => {
    let server: http.Server;
    let port: number;
    let connections = 0;
    let requests = 0;

    beforeAll(async () => {
      server = http.createServer((_req, res) => {
        requests += 1;
        res.end('ok');
      });
      server.on('connection', () => {
        connections += 1;
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as net.AddressInfo).port;
    });

    afterAll(async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve, reject) =>
        server.close((err) => (err ? reject(err) : resolve())),
      );
    });

    beforeEach(() => {
      connections = 0;
      requests = 0;
    });

    /** GET http://hooks.example.test:<port>/ through an agent whose lookup is `lookup`. */
    function get(
      lookup: net.LookupFunction,
      autoSelectFamily: boolean,
    ): Promise<{ status: number; body: string } | NodeJS.ErrnoException> {
      const agent = new http.Agent({ lookup, autoSelectFamily });
      return new Promise<{ status: number; body: string } | NodeJS.ErrnoException>((resolve) => {
        const req = http.request({ host: 'hooks.example.test', port, path: '/', agent }, (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (body += chunk));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        });
        req.on('error', resolve);
        req.end();
      }).finally(() => agent.destroy());
    }

    // autoSelectFamily true makes net call lookup with { all: true }; false, without.
    it.each([
      { autoSelectFamily: true, all: true },
      { autoSelectFamily: false, all: undefined },
    ])(
      'refuses a host resolving to 127.0.0.1 before connecting (autoSelectFamily $autoSelectFamily)',
      async ({ autoSelectFamily, all }) => {
        const lookup = jest.fn(guardedLookup(strict, fakeLookup(['127.0.0.1']).impl));
        const outcome = await get(lookup, autoSelectFamily);
        expect(outcome).toBeInstanceOf(WebhookUrlError);
        expect(outcome).toMatchObject({ code: 'EWEBHOOKBLOCKED' });
        expect(lookup).toHaveBeenCalledTimes(1);
        expect(lookup.mock.calls[0]![1].all).toBe(all);
        expect(connections).toBe(0);
        expect(requests).toBe(0);
      },
    );

    it.each([{ autoSelectFamily: true }, { autoSelectFamily: false }])(
      'connects to the looked-up address under allowPrivate (autoSelectFamily $autoSelectFamily)',
      async ({ autoSelectFamily }) => {
        const lookup = guardedLookup(dev, fakeLookup(['127.0.0.1']).impl);
        const outcome = await get(lookup, autoSelectFamily);
        expect(outcome).toEqual({ status: 200, body: 'ok' });
        expect(requests).toBe(1);
      },
    );
  });
});
