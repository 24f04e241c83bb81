/**
 * One HTTP exchange with the API: default headers, timeout, error mapping and retries.
 * Uses only web APIs (fetch, Headers, AbortController) so it runs in Node 18+ and browsers.
 */
import { webCrypto } from './web-crypto';
import {
  PlatformApiError,
  PlatformConnectionError,
  PlatformTimeoutError,
  parseRetryAfter,
} from './errors';
import type { TokenSource } from './oauth';

export interface HttpClientConfig {
  /** Where each attempt's bearer token comes from (fixed, or OAuth with renewal). */
  tokens: TokenSource;
  /** Retries after the first attempt; 0 disables retrying. */
  maxRetries: number;
  /** Longest `Retry-After` honoured; a longer one is not waited for, the error is thrown at once. */
  maxRetryAfterMs: number;
  /** First backoff delay; doubles per retry, up to `maxRetryDelayMs`, with jitter. */
  initialRetryDelayMs: number;
  maxRetryDelayMs: number;
  /** Per attempt, covering connection, headers and body. */
  timeoutMs: number;
  userAgent: string;
  headers: Record<string, string>;
  fetch: typeof fetch;
  /** Should reject when `signal` aborts; one that ignores it only delays the abort. */
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  /**
   * Give every POST a generated `Idempotency-Key` (unless it has one), so that it can be
   * retried like a GET. Default true.
   */
  idempotencyKeys?: boolean;
  hooks?: RequestHooks;
}

/** What `onRequest` sees, once per attempt, before the request is sent. */
export interface RequestHookEvent {
  method: string;
  url: string;
  /**
   * The headers about to be sent (lower-case names); add to them, e.g. `traceparent`. The
   * `authorization` header is added after the hook, so logging this never logs a token.
   */
  headers: Record<string, string>;
  /** 0 for the first attempt, 1 for the first retry, … */
  attempt: number;
}

/** What `onResponse` sees, once per attempt that got a response (2xx or not). */
export interface ResponseHookEvent {
  method: string;
  url: string;
  status: number;
  headers: Headers;
  /** The response's `X-Request-Id`. */
  requestId: string | undefined;
  attempt: number;
  /** From sending the request to the end of the body. */
  durationMs: number;
}

/** What `onError` sees, once per attempt that got no response (network error, timeout, abort). */
export interface ErrorHookEvent {
  method: string;
  url: string;
  error: unknown;
  attempt: number;
  durationMs: number;
}

/** What `onDeprecation` sees: the server said (`Deprecation` header) this request uses a deprecated part. */
export interface DeprecationEvent {
  method: string;
  url: string;
  /** The operation, as `GET /v1/students/{id}` (id-like path segments replaced). */
  operation: string;
  /** When it was deprecated (the `Deprecation` header, RFC 9745). */
  deprecatedAt: Date | undefined;
  /** When it may stop working (the `Sunset` header, RFC 8594), if the server named a date. */
  sunset: Date | undefined;
  /** The migration notes (`Link; rel="deprecation"`). */
  links: string[];
  /** The text `console.warn` gets when there is no `onDeprecation` hook. */
  message: string;
}

/**
 * Called for every attempt, retries included, in the order they happen. A hook that throws
 * fails the call with its error; a hook that returns a promise is awaited.
 */
export interface RequestHooks {
  onRequest?: (event: RequestHookEvent) => void | Promise<void>;
  onResponse?: (event: ResponseHookEvent) => void | Promise<void>;
  onError?: (event: ErrorHookEvent) => void | Promise<void>;
  /**
   * Replaces the `console.warn` the client gives, once per operation and announcement, when a
   * response carries a `Deprecation` header (so even an older SDK hears of a new deprecation).
   */
  onDeprecation?: (event: DeprecationEvent) => void;
}

export interface HttpRequest {
  method: string;
  url: string;
  headers?: Record<string, string>;
  body?: BodyInit | null;
  /** Aborting rejects with the signal's reason and stops any retry. */
  signal?: AbortSignal | null;
  /** Other fetch options (credentials, cache, …), passed through. */
  fetchOptions?: Omit<RequestInit, 'method' | 'headers' | 'body' | 'signal'>;
  /** This call's retries, instead of the client's. */
  maxRetries?: number;
  /** This call's per-attempt timeout, instead of the client's. */
  timeoutMs?: number;
  /**
   * A 2xx's body is handed back unread (a `ReadableStream`), for a large download: the timeout
   * then covers the response's headers only. An error response is read as usual.
   */
  stream?: boolean;
}

export interface HttpResponse {
  status: number;
  headers: Headers;
  body: unknown;
  /** How many retries it took to get this response (0: the first attempt). */
  retriesTaken?: number;
}

/** Methods a repeated request cannot change the outcome of (RFC 9110 §9.2.2). */
const IDEMPOTENT_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']);

/**
 * A random (version 4) UUID for an `Idempotency-Key`. `crypto.randomUUID` exists in Node 18+
 * and in browsers on secure origins; `getRandomValues` also on plain-http pages. Undefined only
 * where there is no Web Crypto at all, and then the POST goes out without a key (not retried).
 */
export async function newIdempotencyKey(): Promise<string | undefined> {
  const crypto: Partial<Crypto> | undefined = await webCrypto();
  if (typeof crypto?.randomUUID === 'function') return crypto.randomUUID();
  if (typeof crypto?.getRandomValues !== 'function') return undefined;
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = (bytes[6]! & 0x0f) | 0x40;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** `setTimeout` that an abort cuts short, so a long `Retry-After` does not outlive the caller's interest. */
export function defaultSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason as Error);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason as Error);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** A public id (`stu_01JD6Y3ZK8R5V2N3M4P5Q6R7S8`): a prefix and a ULID. */
const ID_SEGMENT = /^[a-z]+_[0-9A-HJKMNP-TV-Z]{26}$/;

/** The `Link` targets with `rel="deprecation"` (RFC 9745 §3). */
function deprecationLinks(header: string | null): string[] {
  if (!header) return [];
  const links: string[] = [];
  for (const match of header.matchAll(/<([^>]*)>([^,<]*)/g)) {
    if (/;\s*rel="?([^";]*\s)?deprecation[\s";]/i.test(`${match[2]!};`)) links.push(match[1]!);
  }
  return links;
}

/** The warning for a response with a `Deprecation` header, or undefined when it has none. */
export function deprecationOf(
  method: string,
  url: string,
  headers: Headers,
): DeprecationEvent | undefined {
  const header = headers.get('deprecation');
  if (header === null) return undefined;
  const seconds = /^@(-?\d+)$/.exec(header.trim())?.[1];
  const deprecatedAt = seconds === undefined ? undefined : new Date(Number(seconds) * 1000);
  const sunsetHeader = headers.get('sunset');
  const sunsetTime = sunsetHeader === null ? NaN : Date.parse(sunsetHeader);
  const sunset = Number.isNaN(sunsetTime) ? undefined : new Date(sunsetTime);
  const links = deprecationLinks(headers.get('link'));
  let path = url;
  try {
    path = new URL(url).pathname;
  } catch {
    // A relative URL (a test's custom fetch): keep it whole.
  }
  const operation = `${method} ${path
    .split('/')
    .map((segment) => (ID_SEGMENT.test(segment) ? '{id}' : segment))
    .join('/')}`;
  const message =
    `Platform API: ${operation} uses a deprecated part of the API` +
    (deprecatedAt ? ` (deprecated since ${deprecatedAt.toISOString().slice(0, 10)})` : '') +
    (sunset ? `; it may stop working after ${sunset.toUTCString()}` : '') +
    '.' +
    (links.length ? ` Migration note: ${links.join(' ')}` : '');
  return { method, url, operation, deprecatedAt, sunset, links, message };
}

export class HttpClient {
  /** Deprecation warnings already given by this client (operation and announcement). */
  private readonly warned = new Set<string>();

  constructor(private readonly config: HttpClientConfig) {}

  /** Warns once per operation and announcement, so a loop over a deprecated call is not flooded. */
  private warnIfDeprecated(method: string, url: string, headers: Headers): void {
    const event = deprecationOf(method, url, headers);
    if (!event) return;
    const key = [
      event.operation,
      headers.get('deprecation'),
      event.sunset?.getTime(),
      ...event.links,
    ].join(' ');
    if (this.warned.has(key)) return;
    this.warned.add(key);
    const hook = this.config.hooks?.onDeprecation;
    if (hook) hook(event);
    else globalThis.console?.warn(event.message);
  }

  /** Resolves with a 2xx response; throws `PlatformApiError` (by kind) or `PlatformConnectionError`. */
  async request(request: HttpRequest): Promise<HttpResponse> {
    const method = request.method.toUpperCase();
    const headers = await this.callHeaders(method, request.headers);
    const keyed = headers['idempotency-key'] !== undefined;
    // A POST or PATCH is only safe to repeat when the server can recognise the repeat.
    const retriable = IDEMPOTENT_METHODS.has(method) || keyed;

    let renewedToken = false;
    const ownAuthorization = headers.authorization !== undefined;
    const maxRetries = request.maxRetries ?? this.config.maxRetries;
    const timeoutMs = request.timeoutMs ?? this.config.timeoutMs;
    const hooks = this.config.hooks ?? {};
    // Counts the attempts actually sent; `attempt` below does not count a token renewal.
    let sent = 0;
    for (let attempt = 0; ; attempt++) {
      let response: HttpResponse;
      let token: string | undefined;
      const { authorization: own, ...attemptHeaders } = headers as Record<string, string> & {
        authorization?: string;
      };
      let started = performance.now();
      let dispatched = false;
      try {
        await hooks.onRequest?.({
          method,
          url: request.url,
          headers: attemptHeaders,
          attempt: sent,
        });
        token = ownAuthorization ? undefined : await this.config.tokens.token();
        const authorization = token !== undefined ? `Bearer ${token}` : own;
        // A new object: the one the hook saw (and may keep, to log later) never gets the token.
        const sending =
          authorization === undefined
            ? { ...attemptHeaders }
            : { ...attemptHeaders, authorization };
        sent++;
        dispatched = true;
        started = performance.now();
        response = await this.attempt(method, sending, request, timeoutMs);
      } catch (error) {
        if (dispatched) {
          await hooks.onError?.({
            method,
            url: request.url,
            error,
            attempt: sent - 1,
            durationMs: performance.now() - started,
          });
        }
        const retry = error instanceof PlatformConnectionError && retriable;
        if (!retry || attempt >= maxRetries) throw error;
        await this.wait(this.backoff(attempt), request.signal);
        continue;
      }
      await this.observe(method, request.url, response, sent - 1, started);
      if (response.status >= 200 && response.status < 300)
        return { ...response, retriesTaken: sent - 1 };
      // An OAuth access token revoked or expired early: renew it once and send again.
      if (
        response.status === 401 &&
        token !== undefined &&
        !renewedToken &&
        this.config.tokens.refused(token)
      ) {
        renewedToken = true;
        attempt--;
        continue;
      }

      const error = PlatformApiError.from(response);
      const delay = this.retryDelay(response, retriable, keyed, attempt);
      if (delay === undefined || attempt >= maxRetries) throw error;
      await this.wait(delay, request.signal);
    }
  }

  /**
   * The headers of every attempt of one call. A POST gets one idempotency key, made before the
   * first attempt: every retry sends these same headers, so the server recognises the repeat and
   * answers it without doing the work twice.
   */
  private async callHeaders(
    method: string,
    extra: Record<string, string> | undefined,
  ): Promise<Record<string, string>> {
    const headers = this.headersFor(extra);
    if (
      method === 'POST' &&
      this.config.idempotencyKeys !== false &&
      headers['idempotency-key'] === undefined
    ) {
      const key = await newIdempotencyKey();
      if (key !== undefined) headers['idempotency-key'] = key;
    }
    return headers;
  }

  /** Tells `onResponse` about an attempt's response (2xx or not), and warns of a deprecation. */
  private async observe(
    method: string,
    url: string,
    response: HttpResponse,
    attempt: number,
    started: number,
  ): Promise<void> {
    await this.config.hooks?.onResponse?.({
      method,
      url,
      status: response.status,
      headers: response.headers,
      requestId: response.headers.get('x-request-id') ?? undefined,
      attempt,
      durationMs: performance.now() - started,
    });
    this.warnIfDeprecated(method, url, response.headers);
  }

  private headersFor(extra: Record<string, string> | undefined): Record<string, string> {
    const headers: Record<string, string> = {
      accept: 'application/json',
      'user-agent': this.config.userAgent,
    };
    for (const source of [this.config.headers, extra ?? {}]) {
      for (const [name, value] of Object.entries(source)) headers[name.toLowerCase()] = value;
    }
    return headers;
  }

  private async attempt(
    method: string,
    headers: Record<string, string>,
    request: HttpRequest,
    timeoutMs: number,
  ): Promise<HttpResponse> {
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    const onAbort = () => controller.abort(request.signal?.reason);
    request.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      if (request.signal?.aborted) throw request.signal.reason;
      const response = await this.config.fetch(request.url, {
        ...request.fetchOptions,
        method,
        headers,
        body: request.body ?? null,
        signal: controller.signal,
      });
      if (request.stream && response.ok) {
        clearTimeout(timer);
        return { status: response.status, headers: response.headers, body: response.body };
      }
      return { status: response.status, headers: response.headers, body: await readBody(response) };
    } catch (error) {
      // The caller's own abort is not a connection problem: surface it unchanged, never retry it.
      if (request.signal?.aborted) throw request.signal.reason;
      if (timedOut) {
        throw new PlatformTimeoutError(
          `${method} ${request.url} got no complete response within ${timeoutMs} ms`,
          method,
          request.url,
          { cause: error },
        );
      }
      throw new PlatformConnectionError(
        `${method} ${request.url} could not reach the API: ${describeCause(error)}`,
        method,
        request.url,
        {
          cause: error,
        },
      );
    } finally {
      clearTimeout(timer);
      request.signal?.removeEventListener('abort', onAbort);
    }
  }

  /** How long to wait before retrying this response, or undefined if it must not be retried. */
  private retryDelay(
    response: HttpResponse,
    retriable: boolean,
    keyed: boolean,
    attempt: number,
  ): number | undefined {
    const { status } = response;
    // The server's word wins: `X-Should-Retry: false` stops a retry, `true` asks for one.
    const should = response.headers.get('x-should-retry')?.trim().toLowerCase();
    if (should === 'false') return undefined;
    // 429 means the request was not processed at all, so even a POST may be repeated. A 409
    // with Retry-After to a keyed request means an earlier attempt with the same key (one
    // that timed out here, say) is still running: wait and the repeat gets its response.
    // 501 and 505 never change, so they are not retried.
    const transient =
      status === 429 ||
      (retriable && (status === 408 || (status >= 500 && status !== 501 && status !== 505))) ||
      (status === 409 && keyed && response.headers.has('retry-after'));
    if (!transient && should !== 'true') return undefined;
    const retryAfter = parseRetryAfter(response.headers.get('retry-after'));
    if (retryAfter === undefined) return this.backoff(attempt);
    // Waiting less than asked only earns another 429; waiting longer than allowed is the caller's call.
    return retryAfter <= this.config.maxRetryAfterMs ? retryAfter : undefined;
  }

  /** Exponential backoff with jitter in [50 %, 100 %] so clients that failed together spread out. */
  private backoff(attempt: number): number {
    const base = Math.min(
      this.config.initialRetryDelayMs * 2 ** attempt,
      this.config.maxRetryDelayMs,
    );
    return Math.round(base * (0.5 + Math.random() / 2));
  }

  private async wait(ms: number, signal: AbortSignal | null | undefined): Promise<void> {
    await this.config.sleep(ms, signal ?? undefined);
    if (signal?.aborted) throw signal.reason;
  }
}

async function readBody(response: Response): Promise<unknown> {
  const text = await response.text();
  if (text === '') return undefined;
  if (!/[/+]json\b/i.test(response.headers.get('content-type') ?? '')) return text;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** undici hides the useful part ("connect ECONNREFUSED 127.0.0.1:1") in `cause`. */
function describeCause(error: unknown): string {
  // Duck-typed: errors from another realm (a vm, an iframe) fail `instanceof Error`.
  const message = (value: unknown) =>
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { message?: unknown }).message === 'string'
      ? (value as { message: string }).message
      : String(value);
  const cause =
    typeof error === 'object' && error !== null ? (error as { cause?: unknown }).cause : undefined;
  return cause === undefined ? message(error) : `${message(error)} (${message(cause)})`;
}
