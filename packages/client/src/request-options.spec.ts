/**
 * Hooks, per-call options, `withResponse()` and the refusal of misplaced options, against a
 * scripted HTTP server on 127.0.0.1 (for the 503s, dropped connections and headers the real
 * server cannot be made to send on demand). Uses the real contract's routes.
 */
import {
  startLocalServer,
  sendJson,
  sendProblem,
  type LocalServer,
  type Responder,
} from '../test/local-server';
import {
  createClient,
  PlatformServerError,
  type ClientOptions,
  type ErrorHookEvent,
  type RequestHookEvent,
  type ResponseHookEvent,
} from './index';

const PAGE = {
  object: 'list',
  data: [],
  meta: { page: 1, per_page: 25, total: 0, total_pages: 0, total_exact: true },
  links: {
    self: '/v1/students',
    first: '/v1/students',
    prev: null,
    next: null,
    last: '/v1/students',
  },
};

let local: LocalServer | undefined;
afterEach(async () => {
  await local?.close();
  local = undefined;
});

async function sdk(respond: Responder, options: Partial<ClientOptions> = {}) {
  local = await startLocalServer(respond);
  return createClient({
    baseUrl: local.url,
    token: 'pat_test',
    sleep: () => Promise.resolve(),
    ...options,
  });
}

const okAfterOne503: Responder = (_req, res, index) =>
  index === 0
    ? sendProblem(res, 503, 'service_unavailable')
    : sendJson(res, 200, PAGE, { 'x-request-id': 'req_second', 'x-ratelimit-remaining': '41' });

describe('hooks', () => {
  it('run once per attempt, retries included, and headers they add are sent', async () => {
    const seen: string[] = [];
    const requests: RequestHookEvent[] = [];
    const responses: ResponseHookEvent[] = [];
    const platform = await sdk(okAfterOne503, {
      hooks: {
        onRequest: (event) => {
          seen.push(`request ${event.attempt}`);
          requests.push(event);
          event.headers['x-trace'] = `trace-${event.attempt}`;
        },
        onResponse: (event) => {
          seen.push(`response ${event.attempt} ${event.status}`);
          responses.push(event);
        },
      },
    });
    const raw = await platform.students.list().withResponse();

    expect(seen).toEqual(['request 0', 'response 0 503', 'request 1', 'response 1 200']);
    expect(local!.requests.map((r) => r.headers['x-trace'])).toEqual(['trace-0', 'trace-1']);
    // The token is added after the hook, so a logged request never holds it.
    expect(requests.every((r) => r.headers.authorization === undefined)).toBe(true);
    expect(local!.requests.every((r) => r.headers.authorization === 'Bearer pat_test')).toBe(true);
    expect(responses[0]!.requestId).toBe('req_local');
    expect(raw).toMatchObject({ status: 200, requestId: 'req_second', retriesTaken: 1 });
    expect(raw.headers.get('x-ratelimit-remaining')).toBe('41');
  });

  it('onError sees an attempt that got no response', async () => {
    const errors: ErrorHookEvent[] = [];
    const platform = await sdk(
      (_req, res, index) => (index === 0 ? res.socket?.destroy() : sendJson(res, 200, PAGE)),
      { hooks: { onError: (event) => void errors.push(event) } },
    );
    await platform.students.list();
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ method: 'GET', attempt: 0 });
    expect((errors[0]!.error as Error).name).toBe('PlatformConnectionError');
  });

  it('a hook that throws fails the call with its error, before anything is sent', async () => {
    const platform = await sdk((_req, res) => sendJson(res, 200, PAGE), {
      hooks: {
        onRequest: () => {
          throw new Error('tracing is down');
        },
      },
    });
    await expect(platform.students.list()).rejects.toThrow('tracing is down');
    expect(local!.requests).toHaveLength(0);
  });
});

describe('per-call options', () => {
  const always503: Responder = (_req, res) => sendProblem(res, 503, 'service_unavailable');

  it('maxRetries overrides the client’s for that call only', async () => {
    const platform = await sdk(always503, { maxRetries: 2 });
    await expect(platform.students.list({}, { maxRetries: 0 })).rejects.toBeInstanceOf(
      PlatformServerError,
    );
    expect(local!.requests).toHaveLength(1);
    await expect(platform.students.list()).rejects.toBeInstanceOf(PlatformServerError);
    expect(local!.requests).toHaveLength(1 + 3);
  });

  it('timeoutMs overrides the client’s for that call only', async () => {
    const platform = await sdk(
      (req, res) => {
        if (req.path.includes('slow')) setTimeout(() => sendJson(res, 200, PAGE), 300);
        else sendJson(res, 200, PAGE);
      },
      { maxRetries: 0, timeoutMs: 5_000 },
    );
    await expect(platform.students.list({ q: 'slow' }, { timeoutMs: 50 })).rejects.toMatchObject({
      name: 'PlatformTimeoutError',
    });
    await expect(platform.students.list({ q: 'slow' })).resolves.toMatchObject({ object: 'list' });
  });

  it('idempotencyKey is sent as Idempotency-Key on every attempt', async () => {
    const platform = await sdk((_req, res, index) =>
      index === 0
        ? sendProblem(res, 503, 'service_unavailable')
        : sendJson(res, 201, { id: 'stu_1' }),
    );
    await platform.students.create(
      { body: { student_number: 'S-1', first_name: 'Ada', last_name: 'Lovelace' } },
      { idempotencyKey: 'sis-row-42' },
    );
    expect(local!.requests.map((r) => r.headers['idempotency-key'])).toEqual([
      'sis-row-42',
      'sis-row-42',
    ]);
  });
});

describe('withResponse()', () => {
  it('leaves no unhandled rejection when only withResponse() is awaited', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const platform = await sdk((_req, res) => sendProblem(res, 404, 'not_found'));
      const error = await platform.students
        .retrieve({ params: { id: 'stu_01JD6Y3ZK8R5V2N3M4P5Q6R7S8' } })
        .withResponse()
        .catch((e: unknown) => e);
      expect(error).toMatchObject({ status: 404, requestId: 'req_local' });
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});

describe('unknown options in plain JavaScript', () => {
  // What a JavaScript caller can write; TypeScript refuses these at compile time.
  type Loose = (input?: unknown, options?: unknown) => Promise<unknown>;

  it('refuses a misplaced signal instead of sending it as a query parameter', async () => {
    const platform = await sdk((_req, res) => sendJson(res, 200, PAGE));
    const list = platform.students.list as unknown as Loose;
    const signal = AbortSignal.timeout(5_000);

    await expect(list({ signal })).rejects.toThrow(
      /students\.list: 'signal' is not a query parameter.*fetchOptions: \{ signal \}/,
    );
    await expect(list({ query: { per_page: 5 }, signal })).rejects.toThrow(
      /students\.list: unknown request argument 'signal'/,
    );
    await expect(list({ per_page: 5, timeoutMs: 100 })).rejects.toThrow(
      /'timeoutMs' is not a query parameter/,
    );
    expect(local!.requests).toHaveLength(0);
    // The right places still work.
    await list({ per_page: 5 }, { timeoutMs: 1000 });
    await list({ query: { per_page: 5 }, fetchOptions: { signal } });
    expect(local!.requests.map((r) => r.path)).toEqual([
      '/v1/students?per_page=5',
      '/v1/students?per_page=5',
    ]);
  });

  it('refuses unknown arguments on routes with params or a body, and unknown request options', async () => {
    const platform = await sdk((_req, res) => sendJson(res, 200, {}));
    const retrieve = platform.students.retrieve as unknown as Loose;
    const params = { id: 'stu_01JD6Y3ZK8R5V2N3M4P5Q6R7S8' };

    await expect(retrieve({ params, signal: AbortSignal.abort() })).rejects.toThrow(
      /students\.retrieve: unknown request argument 'signal'/,
    );
    await expect(retrieve({ params }, { timeout: 5 })).rejects.toThrow(
      /unknown request option 'timeout'; request options are maxRetries, timeoutMs and idempotencyKey/,
    );
    await expect(retrieve({ params }, { maxRetries: -1 })).rejects.toThrow(
      /`maxRetries` must be a non-negative number/,
    );
    expect(local!.requests).toHaveLength(0);
  });
});
