/**
 * Deprecation headers (RFC 9745 `Deprecation`, RFC 8594 `Sunset`, `Link; rel="deprecation"`),
 * proven on a test contract served through the real application: nothing in the real API is
 * deprecated, so a tiny controller implements a contract with a deprecated operation, parameter
 * and field, behind the same guards, interceptors and error filter as every resource.
 */
import { Controller, Module } from '@nestjs/common';
import { deprecated, operation } from '@platform/contract';
import { initClient, initContract } from '@ts-rest/core';
import { tsRestHandler } from '@ts-rest/nest';
import { z } from 'zod';
import { ApiHandler } from '../src/common/api-handler';
import { renderDeprecationsPage } from '../src/docs/deprecations-page';
import { typedClient } from './support/api';
import { rawCall, startServer, type TestServer } from './support/server';

const c = initContract();
const MIGRATION_NOTE = 'https://docs.school.test/migrate/nickname';
const legacyContract = c.router({
  list: {
    method: 'GET',
    path: '/v1/legacy-things',
    query: z
      .object({
        page: z.coerce.number().int().min(1).optional(),
        colour: deprecated(z.string().optional(), {
          since: '2025-12-01',
          sunset: '2026-07-01',
          replacement: '`color`',
        }),
        color: z.string().optional(),
      })
      .strict(),
    responses: {
      200: z.object({
        data: z.array(z.string()),
        links: z.object({ first: z.string(), prev: z.null(), next: z.null(), last: z.string() }),
      }),
    },
    metadata: operation({
      scope: 'students:read',
      deprecated: { since: '2026-01-01', sunset: '2027-01-01', replacement: '`students.list`' },
    }),
  },
  create: {
    method: 'POST',
    path: '/v1/legacy-things',
    body: z
      .object({
        name: z.string(),
        nickname: deprecated(z.string().optional(), { since: '2026-02-01', link: MIGRATION_NOTE }),
      })
      .strict(),
    responses: { 201: z.object({ name: z.string() }) },
    metadata: operation({ scope: 'students:write' }),
  },
});

@Controller()
class LegacyController {
  @ApiHandler(legacyContract)
  handle() {
    return tsRestHandler(legacyContract, {
      list: () =>
        Promise.resolve({
          status: 200,
          body: {
            data: ['a'],
            links: {
              first: '/v1/legacy-things?page=1',
              prev: null,
              next: null,
              last: '/v1/legacy-things?page=1',
            },
          },
        }),
      create: ({ body }) => Promise.resolve({ status: 201 as const, body: { name: body.name } }),
    });
  }
}

@Module({ controllers: [LegacyController] })
class LegacyModule {}

/** 2026-01-01T00:00:00Z and 2025-12-01T00:00:00Z in Unix seconds. */
const JAN_2026 = '@1767225600';
const DEC_2025 = '@1764547200';

describe('deprecation headers', () => {
  let server: TestServer;
  let token: string;

  beforeAll(async () => {
    server = await startServer({}, { modules: [LegacyModule] });
    const org = await server.createOrganization();
    ({ token } = await server.createToken(org.id, ['students:read', 'students:write']));
  });
  afterAll(() => server.close());

  /** The test contract's own typed client; `base` is '' or the `/api` alias prefix. */
  const legacy = (base = '') =>
    initClient(legacyContract, {
      baseUrl: `${server.url}${base}`,
      baseHeaders: { authorization: `Bearer ${token}` },
      throwOnUnknownStatus: false,
    });

  const page = (anchor: string) =>
    `<${server.url}/docs/deprecations#${anchor}>; rel="deprecation"; type="text/html"`;

  it.each([
    ['/v1', ''],
    ['/api/v1', '/api'],
  ])(
    'announces a deprecated operation under %s, next to its pagination links',
    async (_prefix, base) => {
      const res = await legacy(base).list();
      expect(res.status).toBe(200);
      expect(res.headers.get('deprecation')).toBe(JAN_2026);
      // The sunset day is promised in full: the header names its last second.
      expect(res.headers.get('sunset')).toBe('Fri, 01 Jan 2027 23:59:59 GMT');
      const link = res.headers.get('link')!;
      expect(link).toContain(page('get-v1-legacy-things'));
      expect(link).toContain('</v1/legacy-things?page=1>; rel="first"');
    },
  );

  it('takes the earliest dates when a deprecated parameter is sent as well, linking both notes', async () => {
    const res = await legacy().list({ query: { colour: 'red' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('deprecation')).toBe(DEC_2025);
    expect(res.headers.get('sunset')).toBe('Wed, 01 Jul 2026 23:59:59 GMT');
    const link = res.headers.get('link')!;
    expect(link).toContain(page('get-v1-legacy-things'));
    expect(link).toContain(page('get-v1-legacy-things--query-colour'));
  });

  it('still announces it on an error answer to a deprecated operation', async () => {
    // A page that is not a number is beyond the contract's types: sent raw.
    const res = await rawCall(server, '/v1/legacy-things?page=zero', { token });
    expect(res.status).toBe(400);
    expect(res.headers.get('deprecation')).toBe(JAN_2026);
  });

  it('announces a deprecated body field only when it is sent, with the contract’s migration note', async () => {
    const send = (body: { name: string; nickname?: string }) => legacy().create({ body });
    const plain = await send({ name: 'x' });
    expect(plain.status).toBe(201);
    expect(plain.headers.get('deprecation')).toBeNull();
    expect(plain.headers.get('link')).toBeNull();

    const old = await send({ name: 'x', nickname: 'y' });
    expect(old.status).toBe(201);
    expect(old.headers.get('deprecation')).toBe('@1769904000');
    expect(old.headers.get('sunset')).toBeNull();
    expect(old.headers.get('link')).toBe(
      `<${MIGRATION_NOTE}>; rel="deprecation"; type="text/html"`,
    );
  });

  it('sends nothing on the real API, where nothing is deprecated', async () => {
    // Through the same app that announced the test contract's deprecations above.
    const res = await typedClient(server, token).students.list({ query: { per_page: 10 } });
    expect(res.status).toBe(200);
    expect(res.headers.get('deprecation')).toBeNull();
    expect(res.headers.get('sunset')).toBeNull();
    // The Link header is there, and holds the pagination links alone.
    const list = `${server.url}/v1/students?per_page=10&page=1`;
    expect(res.headers.get('link')).toBe(`<${list}>; rel="first", <${list}>; rel="last"`);
    // Nothing in the contract is marked deprecated, which is why: the page says so.
    const docs = await rawCall(server, '/docs/deprecations');
    expect(docs.body).toContain('Nothing in this API is deprecated today.');
  });

  it('serves the deprecations page the links point at', async () => {
    // The HTML page is not part of the API contract: read raw.
    const res = await rawCall(server, '/docs/deprecations');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.body).toContain('Nothing in this API is deprecated today.');
    // For a contract with deprecations, each header's anchor is an entry of the page.
    const html = renderDeprecationsPage({ legacy: legacyContract });
    expect(html).toContain('id="get-v1-legacy-things"');
    expect(html).toContain('id="get-v1-legacy-things--query-colour"');
    expect(html).toContain('Deprecated since 2025-12-01; it stops working after 2026-07-01');
  });
});
