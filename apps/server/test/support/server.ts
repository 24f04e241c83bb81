import { startTestServer, type TestServer, type TestServerOptions } from '../../src/testing';

/** Which database this run uses: PostgreSQL when TEST_DATABASE_URL is set (as .ci/run does), else SQLite. */
export const DATABASE_KIND = process.env.TEST_DATABASE_URL ? 'postgres' : 'sqlite';

export function startServer(
  env: TestServerOptions['env'] = {},
  options: Pick<TestServerOptions, 'logDestination'> = {},
): Promise<TestServer> {
  return startTestServer({
    ...(process.env.TEST_DATABASE_URL && { postgresAdminUrl: process.env.TEST_DATABASE_URL }),
    env,
    ...options,
  });
}

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

/** A GET (or other method) against the server with an optional bearer token; parses JSON bodies. */
export async function call<T = any>(
  server: TestServer,
  path: string,
  options: {
    token?: string;
    method?: string;
    headers?: Record<string, string>;
    body?: string;
  } = {},
): Promise<ApiResponse<T>> {
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
