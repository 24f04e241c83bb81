/**
 * The SDK warns once per operation when the server answers with `Deprecation` (RFC 9745): the
 * header drives it, so even an SDK built before the deprecation warns. Against a loopback server
 * that sends the headers, as the Platform server does for a deprecated route of a test contract.
 */
import { initContract } from '@ts-rest/core';
import { sendJson, startLocalServer, type LocalServer, type Responder } from '../test/local-server';
import type { ClientOptions } from './client';
import { createClientFor } from './client-for';
import type { DeprecationEvent } from './http-client';

const c = initContract();
const testContract = c.router({
  things: {
    get: {
      method: 'GET',
      path: '/v1/things/:id',
      responses: { 200: c.type<{ id: string }>() },
      metadata: { scope: 'students:read', deprecated: { since: '2026-01-01' } } as const,
    },
    list: {
      method: 'GET',
      path: '/v1/things',
      responses: { 200: c.type<{ data: unknown[] }>() },
      metadata: { scope: 'students:read' } as const,
    },
  },
});

const DEPRECATED = {
  deprecation: '@1767225600',
  sunset: 'Fri, 01 Jan 2027 23:59:59 GMT',
  link: '</v1/things?page=1>; rel="first", <http://127.0.0.1/docs/deprecations#get-v1-things-id>; rel="deprecation"; type="text/html"',
};
const ID_1 = 'thg_01JD6Y3ZK8R5V2N3M4P5Q6R7S8';
const ID_2 = 'thg_01JD6Y3ZK8R5V2N3M4P5Q6R7S9';

let server: LocalServer;
let warn: jest.SpyInstance;

/** `/v1/things/…` is deprecated; `/v1/things` is not. */
const respond: Responder = (req, res) =>
  req.path.startsWith('/v1/things/')
    ? sendJson(res, 200, { id: req.path.split('/').pop() }, DEPRECATED)
    : sendJson(res, 200, { data: [] });

beforeEach(async () => {
  server = await startLocalServer(respond);
  warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
});
afterEach(async () => {
  warn.mockRestore();
  await server.close();
});

const sdk = (options: Partial<ClientOptions> = {}) =>
  createClientFor(testContract, { baseUrl: server.url, token: 'pat_test', ...options });

describe('deprecation warnings', () => {
  it('warns once for two calls of a deprecated operation (other ids included), naming dates and note', async () => {
    const client = sdk();
    await client.things.get({ params: { id: ID_1 } });
    await client.things.get({ params: { id: ID_2 } });
    await client.things.list();

    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn.mock.calls[0]![0]).toBe(
      'Platform API: GET /v1/things/{id} uses a deprecated part of the API (deprecated since 2026-01-01); it may stop working after Fri, 01 Jan 2027 23:59:59 GMT. Migration note: http://127.0.0.1/docs/deprecations#get-v1-things-id',
    );
  });

  it('gives the announcement to an onDeprecation hook instead of the console, once', async () => {
    const events: DeprecationEvent[] = [];
    const client = sdk({ hooks: { onDeprecation: (event) => events.push(event) } });
    await client.things.get({ params: { id: ID_1 } });
    await client.things.get({ params: { id: ID_1 } });

    expect(warn).not.toHaveBeenCalled();
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      method: 'GET',
      operation: 'GET /v1/things/{id}',
      deprecatedAt: new Date('2026-01-01T00:00:00Z'),
      sunset: new Date('2027-01-01T23:59:59Z'),
      links: ['http://127.0.0.1/docs/deprecations#get-v1-things-id'],
    });
  });

  it('says nothing for an operation the server does not call deprecated', async () => {
    await sdk().things.list();
    expect(warn).not.toHaveBeenCalled();
  });
});
