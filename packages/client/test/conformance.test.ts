/**
 * The SDK conformance suite (conformance/http/scenarios.json) through this SDK: each scenario's
 * call made with the TypeScript client against the scripted loopback server, which judges the
 * requests and the outcome reported here. The PHP and Python SDKs run the same scenarios.
 * Run by `pnpm --filter @platform/conformance test` (or `pnpm --filter @platform/client test:conformance`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import {
  createClient,
  PlatformApiError,
  PlatformAuthenticationError,
  PlatformConflictError,
  PlatformConnectionError,
  PlatformNotFoundError,
  PlatformPermissionError,
  PlatformRateLimitError,
  PlatformServerError,
  PlatformTimeoutError,
  PlatformValidationError,
  type RawResponse,
} from '../src/index';

interface Scenario {
  name: string;
  client: { base_path?: string; max_retries?: number; timeout?: number; app_info?: string };
  call: {
    resource?: string;
    method?: string;
    id?: string;
    body?: Record<string, unknown>;
    query?: Record<string, unknown>;
    request_options?: { idempotency_key?: string; max_retries?: number; timeout?: number };
    raw?: boolean;
    iterate?: boolean;
    request?: { method: string; path: string; query?: Record<string, string>; body?: unknown };
  };
}

const ROOT = path.resolve(__dirname, '../../..');
const { scenarios } = JSON.parse(
  readFileSync(path.join(ROOT, 'conformance/http/scenarios.json'), 'utf8'),
) as { scenarios: Scenario[] };

let server: ChildProcess;
let origin: string;

beforeAll(async () => {
  server = spawn(process.execPath, [path.join(ROOT, 'tooling/conformance/src/server.js')], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: server.stdout! }).once('line', resolve);
    server.once('exit', (code) => reject(new Error(`the conformance server exited (${code})`)));
  });
  origin = line.replace(/^listening /, '');
});

afterAll(() => {
  server.stdin?.end();
  server.kill();
});

async function control(action: string, body?: unknown): Promise<{ mismatches: string[] }> {
  const response = await fetch(`${origin}/__conformance/${action}`, {
    method: 'POST',
    body: JSON.stringify(body ?? {}),
  });
  return (await response.json()) as { mismatches: string[] };
}

/** A neutral query: nested objects are range filters (`created_at[gte]`). */
function flatQuery(query: Record<string, unknown> = {}): Record<string, unknown> {
  const flat: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(query)) {
    if (value !== null && typeof value === 'object') {
      for (const [op, v] of Object.entries(value)) flat[`${name}[${op}]`] = v;
    } else flat[name] = value;
  }
  return flat;
}

function errorOutcome(error: unknown) {
  const kind =
    error instanceof PlatformValidationError
      ? 'validation'
      : error instanceof PlatformAuthenticationError
        ? 'authentication'
        : error instanceof PlatformPermissionError
          ? 'permission'
          : error instanceof PlatformNotFoundError
            ? 'not_found'
            : error instanceof PlatformConflictError
              ? 'conflict'
              : error instanceof PlatformRateLimitError
                ? 'rate_limit'
                : error instanceof PlatformServerError
                  ? 'server'
                  : error instanceof PlatformApiError
                    ? 'api'
                    : error instanceof PlatformTimeoutError
                      ? 'timeout'
                      : error instanceof PlatformConnectionError
                        ? 'connection'
                        : undefined;
  if (kind === undefined) throw error;
  if (!(error instanceof PlatformApiError)) return { kind };
  return {
    kind,
    status: error.status,
    code: error.code ?? null,
    request_id: error.requestId ?? null,
    detail: error.problem ? error.detail : null,
    retry_after: error instanceof PlatformRateLimitError ? (error.retryAfter ?? null) : null,
    field_errors: error instanceof PlatformValidationError ? error.errors.map((e) => e.path) : [],
  };
}

async function run(scenario: Scenario) {
  const waits: number[] = [];
  const settings = scenario.client;
  const client = createClient({
    baseUrl: `${origin}${settings.base_path ?? ''}`,
    token: 'pat_conformance',
    ...(settings.max_retries !== undefined && { maxRetries: settings.max_retries }),
    ...(settings.timeout !== undefined && { timeoutMs: settings.timeout * 1000 }),
    ...(settings.app_info !== undefined && { userAgent: settings.app_info }),
    sleep: (ms) => {
      waits.push(ms / 1000);
      return Promise.resolve();
    },
  });
  const { call } = scenario;
  const ro = call.request_options;
  const options = ro && {
    ...(ro.idempotency_key !== undefined && { idempotencyKey: ro.idempotency_key }),
    ...(ro.max_retries !== undefined && { maxRetries: ro.max_retries }),
    ...(ro.timeout !== undefined && { timeoutMs: ro.timeout * 1000 }),
  };
  try {
    if (call.request) {
      const { method, path: p, query, body } = call.request;
      const value = await client.request(method, p as `/${string}`, { query, body }, options);
      return { ok: true, value, waits };
    }
    const resource = (client as unknown as Record<string, Record<string, unknown>>)[
      call.resource!
    ]!;
    const method = resource[call.method!] as (...args: unknown[]) => Promise<unknown> & {
      withResponse(): Promise<RawResponse<unknown>>;
    } & AsyncIterable<{ id: string }>;
    const args: Record<string, unknown> = {};
    if (call.body !== undefined) args.body = call.body;
    if (call.query !== undefined) args.query = flatQuery(call.query);
    // The id positionally, as `students.retrieve('stu_…')`.
    const promise = call.id !== undefined ? method(call.id, args, options) : method(args, options);
    if (call.iterate) {
      const ids: string[] = [];
      for await (const item of promise) ids.push(item.id);
      return { ok: true, ids, waits };
    }
    if (call.raw) {
      const raw = await promise.withResponse();
      const headers: Record<string, string> = {};
      raw.headers.forEach((value, name) => (headers[name] = value));
      return {
        ok: true,
        value: raw.data,
        status: raw.status,
        request_id: raw.requestId ?? null,
        headers,
        waits,
      };
    }
    return { ok: true, value: await promise, waits };
  } catch (error) {
    return { ok: false, error: errorOutcome(error), waits };
  }
}

describe('SDK conformance (TypeScript)', () => {
  it.each(scenarios.map((s) => [s.name, s] as const))('%s', async (name, scenario) => {
    await control('start', { name });
    const outcome = await run(scenario);
    const verdict = await control('verdict', outcome);
    expect(verdict.mismatches).toEqual([]);
  });
});
