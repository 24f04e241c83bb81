/**
 * What a caller without a valid credential can cost the server: every answer to it is charged to
 * its IP's budget before its body is read, and the OAuth endpoints have per-IP and per-client
 * budgets of their own. Each test speaks from its own loopback address (127.0.0.x), so each has
 * its own client IP and budget.
 */
import { type IncomingHttpHeaders, request as httpRequest } from 'node:http';
import { randomBytes } from 'node:crypto';
import { contract } from '@platform/contract';
import { initClient } from '@ts-rest/core';
import { OAuthArtifactRecord } from '../src/oauth/entities';
import { OAUTH_TTL } from '../src/oauth/oauth-provider.service';
import { startServer, type TestServer } from './support/server';

const ANONYMOUS_LIMIT = 8;
const OAUTH_LIMIT = 6;
const OAUTH_CLIENT_LIMIT = 3;
const REDIRECT_URI = 'https://app.example/callback';

let server: TestServer;

beforeAll(async () => {
  server = await startServer({
    RATE_LIMIT_ANONYMOUS: String(ANONYMOUS_LIMIT),
    RATE_LIMIT_OAUTH: String(OAUTH_LIMIT),
    RATE_LIMIT_OAUTH_CLIENT: String(OAUTH_CLIENT_LIMIT),
    WEBHOOK_DISPATCHER: 'false',
  });
});
afterAll(() => server?.close());

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * One HTTP request from the loopback address `from`. With `declaredLength`, the request
 * announces a body of that many bytes and never sends it: an answer can then only come from a
 * server that did not wait for the body.
 */
function send(
  from: string,
  method: string,
  path: string,
  options: { headers?: Record<string, string>; body?: string; declaredLength?: number } = {},
): Promise<Answer> {
  const { hostname, port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({
      host: hostname,
      port,
      localAddress: from,
      method,
      path,
      agent: false,
      headers: {
        ...options.headers,
        ...(options.body !== undefined && { 'Content-Length': Buffer.byteLength(options.body) }),
        ...(options.declaredLength !== undefined && { 'Content-Length': options.declaredLength }),
      },
    });
    const timer = setTimeout(() => {
      req.destroy();
      reject(new Error(`no answer to ${method} ${path} within 5 s`));
    }, 5_000);
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        clearTimeout(timer);
        req.destroy();
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        });
      });
    });
    req.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    if (options.declaredLength !== undefined) {
      req.flushHeaders();
      return;
    }
    req.end(options.body);
  });
}

/**
 * The contract's typed client (as support/api.ts makes it), sending each request with `send`
 * from the loopback address `from`: the calls the contract can express, from a chosen client IP.
 */
function typedFrom(from: string, token?: string) {
  return initClient(contract, {
    baseUrl: '',
    baseHeaders: token ? { authorization: `Bearer ${token}` } : {},
    throwOnUnknownStatus: false,
    api: async ({ path, method, headers, body }) => {
      const answer = await send(from, method, path, {
        headers,
        ...(typeof body === 'string' && { body }),
      });
      const json = /json/.test(answer.headers['content-type'] ?? '');
      return {
        status: answer.status,
        body: json ? JSON.parse(answer.body) : answer.body,
        headers: new Headers(
          Object.entries(answer.headers).flatMap(([name, value]) =>
            value === undefined ? [] : [[name, String(value)] as [string, string]],
          ),
        ),
      };
    },
  });
}

/** A 429 of this limit, from `send` (node's headers, a raw body) or the typed client. */
function expectRateLimited(
  answer: { status: number; headers: IncomingHttpHeaders | Headers; body: unknown },
  limit: number,
): void {
  const header = (name: string) =>
    answer.headers instanceof Headers ? answer.headers.get(name) : answer.headers[name];
  expect(answer.status).toBe(429);
  expect(header('content-type')).toMatch(/^application\/problem\+json/);
  const body = typeof answer.body === 'string' ? JSON.parse(answer.body) : answer.body;
  expect(body).toMatchObject({ code: 'rate_limited', status: 429 });
  expect(Number(header('retry-after'))).toBeGreaterThanOrEqual(1);
  expect(Number(header('retry-after'))).toBeLessThanOrEqual(60);
  expect(header('x-ratelimit-limit')).toBe(String(limit));
}

const json = { 'Content-Type': 'application/json' };

describe('anonymous callers of the API', () => {
  it('are charged for every answer, and once over budget refused before their body is read', async () => {
    const ip = '127.0.0.11';
    // Unknown routes and methods, content the contract refuses: sent raw.
    const deep = '['.repeat(40) + ']'.repeat(40);
    const answers = [
      await send(ip, 'GET', '/v1/nope'),
      await send(ip, 'PUT', '/v1/students'),
      await send(ip, 'GET', '/v1/students', { headers: { Accept: 'text/html' } }),
      await send(ip, 'POST', '/v1/students', {
        headers: { 'Content-Type': 'text/plain' },
        body: 'hello',
      }),
      await send(ip, 'POST', '/v1/students', {
        headers: json,
        body: JSON.stringify({ note: 'x'.repeat(1_100_000) }),
      }),
      await send(ip, 'POST', '/v1/students', { headers: json, body: '{"first_name": ' }),
      // A search the contract's types allow and the server refuses.
      await typedFrom(ip).students.list({ query: { q: '\u0000' } }),
      await send(ip, 'POST', '/v1/students', { headers: json, body: deep }),
    ];
    expect(answers.map((a) => a.status)).toEqual([404, 405, 406, 415, 413, 400, 400, 400]);

    // Those spent the budget: the next request is refused, whatever it is.
    expectRateLimited(await typedFrom(ip).students.list(), ANONYMOUS_LIMIT);
    // A megabyte announced and never sent: answered at once, so the body was never waited for.
    const withheld = await send(ip, 'POST', '/v1/students', {
      headers: json,
      declaredLength: 1024 * 1024,
    });
    expectRateLimited(withheld, ANONYMOUS_LIMIT);
    expect(withheld.headers.connection).toBe('close');
    // A token that is not valid makes no difference: the request is still the IP's.
    const forged = await send(ip, 'POST', '/v1/students', {
      headers: { ...json, Authorization: `Bearer pat_${randomBytes(20).toString('hex')}` },
      declaredLength: 1024 * 1024,
    });
    expectRateLimited(forged, ANONYMOUS_LIMIT);

    // A valid token from the same address is charged to its organization, not to the IP.
    const org = await server.createOrganization();
    const { token } = await server.createToken(org.id, ['students:read']);
    const member = await typedFrom(ip, token).students.list();
    expect(member.status).toBe(200);
    expect(member.headers.get('x-ratelimit-limit')).toBe('600');
    // Load balancers' probes are never limited.
    expect((await send(ip, 'GET', '/health/live')).status).toBe(200);
  });
});

describe('the OAuth endpoints', () => {
  it('are limited per IP, and anonymous sign-ins leave a bounded number of short-lived rows', async () => {
    const org = await server.createOrganization();
    const client = await server.createOAuthClient(org.id, {
      type: 'confidential',
      redirect_uris: [REDIRECT_URI],
      scopes: ['students:read'],
    });
    // Expired leftovers (say, from before a restart): purged by the next write.
    const artifacts = server.dataSource.getRepository(OAuthArtifactRecord);
    await artifacts.insert(
      Array.from({ length: 20 }, () => ({
        kind: 'Interaction',
        idHash: randomBytes(32).toString('hex'),
        payload: '{}',
        expiresAt: new Date(Date.now() - 1000),
      })),
    );

    const ip = '127.0.0.21';
    const authorize =
      `/oauth/authorize?response_type=code&client_id=${client.id}` +
      `&redirect_uri=${encodeURIComponent(REDIRECT_URI)}&scope=students%3Aread&state=s` +
      `&code_challenge=${'a'.repeat(43)}&code_challenge_method=S256`;
    const answers: Answer[] = [];
    for (let i = 0; i <= OAUTH_LIMIT; i++) answers.push(await send(ip, 'GET', authorize));
    expect(answers.slice(0, OAUTH_LIMIT).map((a) => a.status)).toEqual(
      Array<number>(OAUTH_LIMIT).fill(303),
    );
    expectRateLimited(answers[OAUTH_LIMIT]!, OAUTH_LIMIT);

    // One row per admitted request, none for the refused one, and each gone within minutes.
    const rows = await artifacts.find();
    expect(rows.map((r) => r.kind)).toEqual(Array<string>(OAUTH_LIMIT).fill('Interaction'));
    for (const row of rows) {
      expect(row.expiresAt!.getTime()).toBeLessThanOrEqual(Date.now() + 10 * 60_000);
    }
    expect(OAUTH_TTL.interaction).toBeLessThanOrEqual(600);

    // Failed token requests count as well.
    const wrong = `Basic ${Buffer.from(`${client.id}:ocs_wrong`).toString('base64')}`;
    const tokenCall = (from: string, authorization: string) =>
      send(from, 'POST', '/oauth/token', {
        headers: {
          Authorization: authorization,
          'Content-Type': 'application/x-www-form-urlencoded',
        },
        body: 'grant_type=client_credentials&scope=students%3Aread',
      });
    const failed: number[] = [];
    for (let i = 0; i < OAUTH_LIMIT; i++)
      failed.push((await tokenCall('127.0.0.22', wrong)).status);
    expect(failed).toEqual(Array<number>(OAUTH_LIMIT).fill(401));
    expectRateLimited(await tokenCall('127.0.0.22', wrong), OAUTH_LIMIT);
  });

  it('limit each confidential client on its own budget, which nobody else can spend', async () => {
    const org = await server.createOrganization();
    const client = await server.createOAuthClient(org.id, {
      type: 'confidential',
      scopes: ['students:read'],
      grant_types: ['client_credentials'],
    });
    const basic = (secret: string) =>
      `Basic ${Buffer.from(`${client.id}:${secret}`).toString('base64')}`;
    const tokenCall = (from: string, secret: string) =>
      send(from, 'POST', '/oauth/token', {
        headers: {
          Authorization: basic(secret),
          'Content-Type': 'application/x-www-form-urlencoded',
        },
        body: 'grant_type=client_credentials&scope=students%3Aread',
      });

    // Someone naming the client without its secret spends only their own IP's budget…
    for (let i = 0; i < OAUTH_CLIENT_LIMIT; i++) {
      expect((await tokenCall('127.0.0.23', 'ocs_guess')).status).toBe(401);
    }
    // …so the client still has its whole budget, and then no more, from any address.
    for (let i = 0; i < OAUTH_CLIENT_LIMIT; i++) {
      const issued = await tokenCall('127.0.0.24', client.client_secret!);
      expect(issued.status).toBe(200);
      expect(issued.headers['ratelimit-policy']).toBe(
        `"oauth_client";q=${OAUTH_CLIENT_LIMIT};w=60`,
      );
    }
    expectRateLimited(await tokenCall('127.0.0.25', client.client_secret!), OAUTH_CLIENT_LIMIT);
  });
});
