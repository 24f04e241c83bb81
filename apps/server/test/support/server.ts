import type { Problem } from '@platform/contract';
import { startTestServer, type TestServer, type TestServerOptions } from '../../src/testing';

/** Which database this run uses: PostgreSQL when TEST_DATABASE_URL is set (as .ci/run does), else SQLite. */
export const DATABASE_KIND = process.env.TEST_DATABASE_URL ? 'postgres' : 'sqlite';

/**
 * Where a test's database comes from: PostgreSQL when TEST_DATABASE_URL is set, and the Jest run's
 * migrated template (PLATFORM_TEST_RUN, made by global-setup.ts) to copy it from.
 */
export function databaseOptions(): { postgresAdminUrl?: string; templateRun?: string } {
  return {
    ...(process.env.TEST_DATABASE_URL && { postgresAdminUrl: process.env.TEST_DATABASE_URL }),
    ...(process.env.PLATFORM_TEST_RUN && { templateRun: process.env.PLATFORM_TEST_RUN }),
  };
}

export function startServer(
  env: TestServerOptions['env'] = {},
  options: Pick<TestServerOptions, 'logDestination' | 'modules' | 'clock' | 'databaseUrl'> = {},
): Promise<TestServer> {
  return startTestServer({
    ...databaseOptions(),
    ...(process.env.TEST_REDIS_URL && { redisUrl: process.env.TEST_REDIS_URL }),
    env,
    ...options,
  });
}

/**
 * A response of the raw escape hatch. `body` is what the server sent (JSON parsed): `unknown`
 * unless the caller names what it expects (`rawCall<T>`); read a refusal with `problemOf`.
 */
export interface RawResponse<T = unknown> {
  status: number;
  headers: Headers;
  body: T;
}

/** The problem+json document of a refused request, typed; fails unless the response is one. */
export function problemOf(res: RawResponse): Problem {
  expect(res.status).toBeGreaterThanOrEqual(400);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  return res.body as Problem;
}

/**
 * The untyped escape hatch: any method and path, any body, `body: any` back. For what the typed
 * client (support/api.ts) cannot send: malformed or forbidden bodies, unknown params, raw bytes.
 * A GET (or other method) against the server with an optional bearer token; parses JSON bodies.
 */
export async function rawCall<T = unknown>(
  server: TestServer,
  path: string,
  options: {
    token?: string;
    method?: string;
    headers?: Record<string, string>;
    body?: string;
  } = {},
): Promise<RawResponse<T>> {
  const res = await fetch(`${server.url}${path}`, {
    method: options.method ?? 'GET',
    headers: {
      ...(options.token && { Authorization: `Bearer ${options.token}` }),
      ...options.headers,
    },
    ...(options.body !== undefined && { body: options.body }),
  });
  const text = await res.text();
  let body: unknown = text;
  if (/json/.test(res.headers.get('content-type') ?? '')) body = JSON.parse(text);
  return { status: res.status, headers: res.headers, body: body as T };
}

export type { TestServer };

/** `rawCall` bound to one token: `raw.post('/v1/students', body)` and friends. */
export function rawClient(server: TestServer, token: string) {
  const send = <T>(method: string, path: string, body?: unknown) =>
    rawCall<T>(server, path, {
      token,
      method,
      ...(body !== undefined && {
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      }),
    });
  return {
    get: <T = unknown>(path: string) => send<T>('GET', path),
    post: <T = unknown>(path: string, body?: unknown) => send<T>('POST', path, body),
    patch: <T = unknown>(path: string, body: unknown) => send<T>('PATCH', path, body),
    delete: <T = unknown>(path: string) => send<T>('DELETE', path),
  };
}

/** The organization's events, oldest first, with their data parsed and their feed positions. */
export async function eventsOf(server: TestServer, organizationId: string) {
  const rows: {
    id: string;
    type: string;
    data: string;
    api_version: string;
    position: string | number | null;
    previous_attributes: string | null;
  }[] = await server.dataSource.query(
    server.config.database.type === 'postgres'
      ? 'SELECT id, type, data, api_version, position, previous_attributes FROM events WHERE organization_id = $1 ORDER BY created_at, id'
      : 'SELECT id, type, data, api_version, position, previous_attributes FROM events WHERE organization_id = ? ORDER BY created_at, id',
    [organizationId],
  );
  return rows.map((row) => ({
    ...row,
    data: JSON.parse(row.data),
    position: row.position === null ? null : Number(row.position),
    previous_attributes:
      row.previous_attributes === null
        ? null
        : (JSON.parse(row.previous_attributes) as Record<string, unknown>),
  }));
}
