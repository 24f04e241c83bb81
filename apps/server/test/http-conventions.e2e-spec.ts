import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ERROR_CODES, ERROR_TITLES, type ErrorCode } from '@platform/contract';
import { expectStatus, typedClient } from './support/api';
import { problemOf, rawCall, startServer, type TestServer } from './support/server';

/** The release as apps/server/package.json states it: what the server must report. */
const serverVersion = (
  JSON.parse(readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8')) as {
    version: string;
  }
).version;

/** What these tests read of the served OpenAPI document. */
interface OpenApiDocument {
  servers: { url: string; description: string }[];
  paths: Record<string, Record<string, { security?: unknown }>>;
}

/**
 * Most requests here are raw on purpose (`rawCall`): routes by path, headers as sent, bodies
 * that are not JSON, pages outside the contract. Plain API calls use the typed client.
 */
describe('HTTP conventions', () => {
  let server: TestServer;
  let token: string;

  beforeAll(async () => {
    server = await startServer();
    const org = await server.createOrganization();
    ({ token } = await server.createToken(org.id, ['students:read']));
  });
  afterAll(() => server.close());

  describe('Platform-Version', () => {
    it.each([
      { what: 'a JSON response', path: '/v1/students', auth: true },
      { what: 'a 401 problem', path: '/v1/students', auth: false },
      { what: 'an unknown route', path: '/nowhere', auth: false },
      { what: 'the health check', path: '/health/live', auth: false },
      { what: 'the OpenAPI document', path: '/openapi.json', auth: false },
      {
        what: 'the authorization server',
        path: '/.well-known/oauth-authorization-server',
        auth: false,
      },
    ])('names the release on $what', async ({ path: route, auth }) => {
      const res = await rawCall(server, route, auth ? { token } : {});
      expect(res.headers.get('platform-version')).toBe(serverVersion);
    });

    it('is the version every package of the release carries', () => {
      expect(serverVersion).toMatch(/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/);
      const contract = JSON.parse(
        readFileSync(
          path.join(__dirname, '..', '..', '..', 'packages', 'contract', 'package.json'),
          'utf8',
        ),
      ) as { version: string };
      expect(serverVersion).toBe(contract.version);
    });
  });

  describe('X-Request-Id', () => {
    it('is generated on every response and repeated in problems', async () => {
      const res = await typedClient(server).students.list();
      expect(res.headers.get('x-request-id')).toMatch(/^req_[0-9a-f]{24}$/);
      expect(expectStatus(res, 401).body.request_id).toBe(res.headers.get('x-request-id'));
    });

    it('echoes a well-formed incoming id and replaces a malformed one', async () => {
      const echoed = await rawCall(server, '/v1/students', {
        token,
        headers: { 'X-Request-Id': 'client-abc.123' },
      });
      expect(echoed.headers.get('x-request-id')).toBe('client-abc.123');
      const replaced = await rawCall(server, '/v1/students', {
        token,
        headers: { 'X-Request-Id': 'bad id <script>' },
      });
      expect(replaced.headers.get('x-request-id')).toMatch(/^req_/);
    });
  });

  describe('Accept', () => {
    it.each(['application/json', '*/*', 'application/*', 'text/html, application/json;q=0.5'])(
      '%s is fine',
      async (accept) => {
        expect(
          (await rawCall(server, '/v1/students', { token, headers: { Accept: accept } })).status,
        ).toBe(200);
      },
    );

    it('answers 406 problem+json when JSON is not acceptable', async () => {
      const res = await rawCall(server, '/v1/students', {
        token,
        headers: { Accept: 'text/html' },
      });
      expect(res.status).toBe(406);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(res.body).toMatchObject({ code: 'not_acceptable', status: 406 });
    });

    it('applies to /api/v1 as well', async () => {
      expect(
        (await rawCall(server, '/api/v1/students', { token, headers: { Accept: 'text/csv' } }))
          .status,
      ).toBe(406);
    });
  });

  describe('problem types', () => {
    it("a problem's type opens this server's errors page at the code's entry", async () => {
      const problem = await rawCall(server, '/v1/students');
      expect(problemOf(problem).type).toBe(`${server.url}/docs/errors#unauthorized`);
      const page = await fetch(problemOf(problem).type);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toMatch(/^text\/html/);
      const html = await page.text();
      // Every code has its entry: the anchor, the status, the title and what to do.
      for (const [code, status] of Object.entries(ERROR_CODES) as [ErrorCode, number][]) {
        const row = new RegExp(`<tr id="${code}">[\\s\\S]*?</tr>`).exec(html)?.[0];
        expect(row).toContain(`<td>${status}</td>`);
        expect(row).toContain(`<td>${ERROR_TITLES[code]}</td>`);
        const whatToDo = /<td>(.*)<\/td>\s*<\/tr>$/.exec(row!)?.[1]?.replace(/<[^>]+>/g, '');
        expect(whatToDo?.length).toBeGreaterThan(30);
      }
    });

    it('is absolute on PUBLIC_URL when it is set', async () => {
      const behindProxy = await startServer({ PUBLIC_URL: 'https://api.school.test' });
      try {
        const problem = await rawCall(behindProxy, '/v1/nope');
        expect(problemOf(problem).type).toBe('https://api.school.test/docs/errors#not_found');
      } finally {
        await behindProxy.close();
      }
    });
  });

  describe('unknown routes and methods', () => {
    it('an unknown path is a 404 problem', async () => {
      const res = await rawCall(server, '/v1/nope', { token });
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({
        type: `${server.url}/docs/errors#not_found`,
        title: 'Not found',
        status: 404,
        code: 'not_found',
        instance: '/v1/nope',
      });
    });

    it('a known path with another method is a 405 with Allow', async () => {
      const res = await rawCall(server, '/api/v1/students', { token, method: 'PUT' });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('GET, POST');
      expect(problemOf(res).code).toBe('method_not_allowed');
      expect(problemOf(res).instance).toBe('/api/v1/students');
    });

    it('a body that is not JSON is a 415', async () => {
      const res = await rawCall(server, '/v1/students', {
        token,
        method: 'POST',
        headers: { 'Content-Type': 'text/plain' },
        body: 'hello',
      });
      expect(res.status).toBe(415);
      expect(problemOf(res).code).toBe('unsupported_media_type');
    });
  });

  describe('request bodies', () => {
    it('invalid JSON is a 400 problem, not a 500', async () => {
      const res = await rawCall(server, '/v1/students', {
        token,
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: '{"first_name": ',
      });
      expect(res.status).toBe(400);
      expect(problemOf(res).code).toBe('validation_error');
    });

    it.each([
      ['xyz-caller-bytes', 'The request body is not valid JSON'],
      ['{"first_name": xyz-caller-bytes}', 'The request body is not valid JSON'],
      ['{"xyz-caller-bytes": "ok",}', 'The request body is not valid JSON (at character 26)'],
      ['{"xyz-caller-bytes": ', 'The request body is not valid JSON'],
    ])('invalid JSON %j: the detail says so without quoting the body', async (body, detail) => {
      const res = await rawCall(server, '/v1/students', {
        token,
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body,
      });
      expect(res.status).toBe(400);
      expect(problemOf(res).detail).toBe(detail);
      expect(JSON.stringify(res.body)).not.toContain('xyz');
    });

    it('a body over 1 MB is refused with 413 before it is parsed', async () => {
      const res = await rawCall(server, '/v1/students', {
        token,
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ note: 'x'.repeat(1_100_000) }),
      });
      expect(res.status).toBe(413);
      expect(problemOf(res).code).toBe('payload_too_large');
    });
  });

  describe('documentation', () => {
    it('serves the committed OpenAPI document, naming the origin it was reached at', async () => {
      const committed = JSON.parse(
        readFileSync(path.join(__dirname, '../../../packages/contract/openapi.json'), 'utf8'),
      );
      const res = await rawCall<OpenApiDocument>(server, '/openapi.json');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        ...committed,
        servers: [{ url: server.url, description: 'This server' }],
      });
      expect(res.body.paths['/v1/students']?.get?.security).toEqual([
        { bearer: ['students:read'] },
        { oauth2: ['students:read'] },
      ]);
    });

    it('names the server it is served by when PUBLIC_URL is set', async () => {
      const named = await startServer({ PUBLIC_URL: 'https://api.school.test/' });
      try {
        const res = await rawCall<OpenApiDocument>(named, '/openapi.json');
        expect(res.body.servers).toEqual([
          { url: 'https://api.school.test', description: 'This server' },
        ]);
        // Everything else is the committed document.
        expect(res.body.paths).toEqual(
          JSON.parse(
            readFileSync(path.join(__dirname, '../../../packages/contract/openapi.json'), 'utf8'),
          ).paths,
        );
      } finally {
        await named.close();
      }
    });

    it('serves an API reference page whose assets load', async () => {
      const page = await rawCall(server, '/docs');
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toMatch(/^text\/html/);
      for (const asset of (page.body as string).matchAll(/(?:src|href)="(\/docs\/[^"]+)"/g)) {
        expect((await rawCall(server, asset[1]!)).status).toBe(200);
      }
    });
  });

  // JSON is written as text in one write with the headers (common/json-reply.ts), not by res.json.
  describe('JSON answers', () => {
    let writer: string;
    let created: { status: number; headers: Headers; bytes: Buffer };
    const names = { first_name: 'Zoë', last_name: 'Ångström-李' };
    const read = async (route: string, init: RequestInit = {}) => {
      const res = await fetch(`${server.url}${route}`, {
        ...init,
        headers: { Authorization: `Bearer ${writer}`, ...init.headers },
      });
      return {
        status: res.status,
        headers: res.headers,
        bytes: Buffer.from(await res.arrayBuffer()),
      };
    };

    beforeAll(async () => {
      const org = await server.createOrganization();
      ({ token: writer } = await server.createToken(org.id, ['students:read', 'students:write']));
      for (let n = 0; n < 30; n++) {
        const body = { student_number: `J-${n}`, ...names };
        created = await read('/v1/students', {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify(body),
        });
      }
    });

    it("keep the handler's status and say their length in bytes, not characters", async () => {
      expect(created.status).toBe(201);
      const student = JSON.parse(created.bytes.toString('utf8')) as { id: string };
      expect(student).toMatchObject(names);
      for (const res of [created, await read(`/v1/students/${student.id}`)]) {
        expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
        expect(Number(res.headers.get('content-length'))).toBe(res.bytes.length);
      }
    });

    it('carry a list page of many kilobytes whole', async () => {
      const res = await read('/v1/students?per_page=30');
      expect(res.status).toBe(200);
      expect(res.bytes.length).toBeGreaterThan(5_000);
      expect(Number(res.headers.get('content-length'))).toBe(res.bytes.length);
      const page = JSON.parse(res.bytes.toString('utf8')) as { data: unknown[] };
      expect(page.data).toHaveLength(30);
      expect(page.data).toEqual(page.data.map(() => expect.objectContaining(names)));
    });

    it('answer HEAD with the headers of GET and no body', async () => {
      const get = await read('/v1/students?per_page=30');
      const head = await read('/v1/students?per_page=30', { method: 'HEAD' });
      expect(head.status).toBe(200);
      expect(head.bytes.length).toBe(0);
      expect(head.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(head.headers.get('content-length')).toBe(String(get.bytes.length));
    });
  });

  describe('security headers', () => {
    it.each([
      { what: 'a JSON response', path: '/v1/students', auth: true },
      { what: 'a problem', path: '/v1/students/stu_nope', auth: true },
      { what: 'an unknown route', path: '/nowhere', auth: false },
      { what: 'the docs page', path: '/docs', auth: false },
      { what: 'the health check', path: '/health/live', auth: false },
      { what: 'a 401', path: '/v1/students', auth: false },
    ])('are on $what', async ({ path: route, auth }) => {
      const res = await rawCall(server, route, auth ? { token } : {});
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('x-frame-options')).toBe('DENY');
      expect(res.headers.get('referrer-policy')).toBe('no-referrer');
      expect(res.headers.get('content-security-policy')).toMatch(/frame-ancestors 'none'/);
      expect(res.headers.get('x-powered-by')).toBeNull();
      // No CORS: the API is for servers; browsers get no cross-origin access.
      expect(res.headers.get('access-control-allow-origin')).toBeNull();
    });

    it('refuses oversized headers with 431 rather than reading them', async () => {
      const res = await fetch(`${server.url}/v1/students`, {
        headers: { 'X-Padding': 'x'.repeat(20_000) },
      });
      expect(res.status).toBe(431);
    });
  });

  // Regression tests from the contract fuzzer: PostgreSQL cannot store U+0000, which was a 500.
  describe('the NUL character', () => {
    it.each([
      { where: 'a path id', route: '/v1/students/stu_%00', path: 'path' },
      { where: 'a query value', route: '/v1/students?q=a%00b', path: 'query' },
    ])('in $where is a 400 naming the $path', async ({ route, path: where }) => {
      const res = await rawCall(server, route, { token });
      expect(res.status).toBe(400);
      expect(problemOf(res).errors?.[0]).toMatchObject({ path: where });
      expect(problemOf(res).detail).toMatch(/NUL/);
    });

    it('in a JSON body string is a 400 naming the field', async () => {
      const res = await rawCall(server, '/v1/students/stu_x', {
        token,
        method: 'PATCH',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ first_name: 'A\u0000B', tags: ['ok'] }),
      });
      expect(res.status).toBe(400);
      expect(problemOf(res).errors?.[0]).toMatchObject({ path: 'body.first_name' });
    });
  });

  // A lone surrogate was stored and read back as three U+FFFD, which broke event consumers.
  describe('text that is not well-formed Unicode', () => {
    let writer: string;
    beforeAll(async () => {
      const org = await server.createOrganization();
      ({ token: writer } = await server.createToken(org.id, ['students:read', 'students:write']));
    });
    const post = async (body: string | Uint8Array) => {
      const res = await fetch(`${server.url}/v1/students`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${writer}`, 'Content-Type': 'application/json' },
        body,
      });
      return { status: res.status, body: (await res.json()) as any };
    };
    const stored = async () =>
      expectStatus(await typedClient(server, writer).students.list(), 200).body.meta.total;

    it.each([
      { what: 'a lone high surrogate', json: '"A\\ud800"', path: 'body.first_name' },
      { what: 'a lone low surrogate', json: '"\\udc00B"', path: 'body.first_name' },
      { what: 'a reversed pair', json: '"\\udc00\\ud800"', path: 'body.first_name' },
    ])(
      '$what in a body string is a 400 naming the field, and nothing is stored',
      async ({ json, path }) => {
        const res = await post(`{"student_number":"U-1","first_name":${json},"last_name":"X"}`);
        expect(res.status).toBe(400);
        const problem = res.body;
        expect(problem).toMatchObject({ code: 'validation_error' });
        expect(problem.errors).toEqual([expect.objectContaining({ path, code: 'invalid_string' })]);
        expect(problem.detail).toMatch(/surrogate/);
        expect(await stored()).toBe(0);
      },
    );

    it('a lone surrogate in a key is a 400 naming the object that holds it', async () => {
      const res = await post(
        '{"student_number":"U-1","first_name":"A","last_name":"X","tags":{"\\ud800":1}}',
      );
      expect(res.status).toBe(400);
      expect(res.body.errors[0]).toMatchObject({ path: 'body.tags' });
    });

    it('a surrogate pair (an emoji) is text like any other', async () => {
      const res = await post(
        '{"student_number":"U-2","first_name":"\\ud83d\\ude00","last_name":"X"}',
      );
      expect(res.status).toBe(201);
      expect(res.body.first_name).toBe('\u{1F600}');
    });

    it('invalid UTF-8 bytes in the body are a 400, not text read as U+FFFD', async () => {
      const before = await stored();
      const bytes = Buffer.concat([
        Buffer.from('{"student_number":"U-3","first_name":"'),
        Buffer.from([0xc3, 0x28, 0xff]),
        Buffer.from('","last_name":"X"}'),
      ]);
      const res = await post(bytes);
      expect(res.status).toBe(400);
      expect(res.body.errors).toEqual([
        { path: 'body', message: 'is not valid UTF-8', code: 'invalid_encoding' },
      ]);
      expect(await stored()).toBe(before);
    });

    it.each([
      { what: 'an encoded surrogate', query: 'q=a%ED%A0%80', path: 'query.q' },
      { what: 'a stray continuation byte', query: 'per_page=10&q=%80', path: 'query.q' },
      { what: 'a truncated sequence', query: 'q=%E2%82', path: 'query.q' },
      { what: 'bad bytes in a name', query: 'q%FF=1', path: 'query.q\uFFFD' },
    ])('$what in the query is a 400 naming the parameter', async ({ query, path }) => {
      const res = await rawCall(server, `/v1/students?${query}`, { token: writer });
      expect(res.status).toBe(400);
      expect(problemOf(res).errors).toEqual([
        { path, message: 'must be valid UTF-8 once percent-decoded', code: 'invalid_string' },
      ]);
    });

    it('a literal % and well-formed UTF-8 in the query are fine', async () => {
      expect(
        (await rawCall(server, '/v1/students?q=100%25%C3%A9%F0%9F%98%80', { token: writer }))
          .status,
      ).toBe(200);
      expect((await rawCall(server, '/v1/students?q=50%', { token: writer })).status).toBe(200);
    });
  });

  it('refuses a body nested deeper than 32 levels, naming where (a fuzzer find: it was a 500)', async () => {
    const res = await rawCall(server, '/v1/students', {
      token,
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: `{"notes":${'['.repeat(50_000)}${']'.repeat(50_000)}}`,
    });
    expect(res.status).toBe(400);
    expect(problemOf(res).errors?.[0]).toMatchObject({ code: 'too_deep' });
    expect(problemOf(res).errors?.[0]?.path).toMatch(/^body\.notes(\.0)+$/);
  });

  describe('health', () => {
    it('reports liveness and readiness, with the release, without a token', async () => {
      expect((await rawCall(server, '/health/live')).body).toEqual({
        status: 'ok',
        version: serverVersion,
      });
      // Redis is checked too in the scale-out deployment (TEST_REDIS_URL runs the suite on it).
      expect((await rawCall(server, '/health/ready')).body).toEqual({
        status: 'ok',
        version: serverVersion,
        checks: { database: 'ok', ...(process.env.TEST_REDIS_URL && { redis: 'ok' }) },
      });
    });
  });
});
