import type { Problem, ProblemCode as ErrorCode, ProblemFieldError } from './generated/types';

/** A known `code`, or one added by a newer server than this SDK knows about. */
export type PlatformErrorCode = ErrorCode | (string & {});

/** Base of every error this SDK throws, so `catch (e) { if (e instanceof PlatformError) … }` works. */
export class PlatformError extends Error {
  override name = 'PlatformError';
}

export interface PlatformApiErrorInit {
  status: number;
  headers: Headers;
  /** The parsed response body: a problem document, or whatever a proxy in between sent. */
  body: unknown;
}

/**
 * The API answered with a non-2xx status. Carries the RFC 9457 problem document the server sent
 * (`problem`), its stable `code`, and the `requestId` to quote to support.
 */
export class PlatformApiError extends PlatformError {
  override name = 'PlatformApiError';
  readonly status: number;
  /** Stable machine-readable code (`unauthorized`, `rate_limited`, …); undefined if the body was not a problem document. */
  readonly code: PlatformErrorCode | undefined;
  /** Human-readable explanation of this occurrence. */
  readonly detail: string;
  /** From the problem's `request_id`, else the `X-Request-Id` header. */
  readonly requestId: string | undefined;
  readonly headers: Headers;
  /** The whole problem+json body; undefined when the response was not a problem document. */
  readonly problem: Problem | undefined;
  /** The raw parsed body, whatever it was. */
  readonly body: unknown;

  constructor(init: PlatformApiErrorInit) {
    const problem = isProblem(init.body) ? init.body : undefined;
    const detail = problem?.detail ?? describeNonProblem(init.status, init.body);
    const requestId = problem?.request_id ?? init.headers.get('x-request-id') ?? undefined;
    const code = problem?.code;
    super(
      `${init.status}${code ? ` ${code}` : ''}: ${detail}${requestId ? ` (request ${requestId})` : ''}`,
    );
    this.status = init.status;
    this.code = code;
    this.detail = detail;
    this.requestId = requestId;
    this.headers = init.headers;
    this.problem = problem;
    this.body = init.body;
  }

  /** The subclass that fits the status, so callers can `instanceof` the kind they handle. */
  static from(init: PlatformApiErrorInit): PlatformApiError {
    switch (init.status) {
      case 400:
        return new PlatformValidationError(init);
      case 401:
        return new PlatformAuthenticationError(init);
      case 403:
        return new PlatformPermissionError(init);
      case 404:
        return new PlatformNotFoundError(init);
      case 409:
        return new PlatformConflictError(init);
      case 410:
        return isProblem(init.body) && init.body.code === 'cursor_expired'
          ? new PlatformCursorExpiredError(init)
          : new PlatformApiError(init);
      case 429:
        return new PlatformRateLimitError(init);
      default:
        return init.status >= 500 ? new PlatformServerError(init) : new PlatformApiError(init);
    }
  }
}

/** 400: the request is invalid; `errors` names each offending parameter. */
export class PlatformValidationError extends PlatformApiError {
  override name = 'PlatformValidationError';
  /** One entry per offending parameter (`path` like `query.per_page`). */
  get errors(): ProblemFieldError[] {
    return this.problem?.errors ?? [];
  }
}

/** 401: missing, malformed, unknown, expired or revoked token. */
export class PlatformAuthenticationError extends PlatformApiError {
  override name = 'PlatformAuthenticationError';
}

/** 403: the token lacks the scope the operation needs (`code` is `insufficient_scope`), or it is forbidden. */
export class PlatformPermissionError extends PlatformApiError {
  override name = 'PlatformPermissionError';
}

/** 404: no such resource in your organization. */
export class PlatformNotFoundError extends PlatformApiError {
  override name = 'PlatformNotFoundError';
}

/** 409: conflicts with the current state (`conflict`, `invalid_state_transition`). */
export class PlatformConflictError extends PlatformApiError {
  override name = 'PlatformConflictError';
}

/**
 * 410 `cursor_expired`: the changes after the cursor are older than the days kept. Retrying
 * cannot help: start again from an export (`client.exports.create`) and follow from its cursor.
 */
export class PlatformCursorExpiredError extends PlatformApiError {
  override name = 'PlatformCursorExpiredError';
  constructor(init: PlatformApiErrorInit) {
    super(init);
    this.message = `${this.message} Start again from an export (POST /v1/exports) and follow from its cursor.`;
  }
}

/** 429: the organization is over its rate limit. Thrown once retries are used up. */
export class PlatformRateLimitError extends PlatformApiError {
  override name = 'PlatformRateLimitError';
  /** Seconds the server asked to wait (`Retry-After`), if it said. */
  get retryAfter(): number | undefined {
    const ms = parseRetryAfter(this.headers.get('retry-after'));
    return ms === undefined ? undefined : Math.ceil(ms / 1000);
  }
}

/** 5xx: something failed on the server's side; quote `requestId` to support. */
export class PlatformServerError extends PlatformApiError {
  override name = 'PlatformServerError';
}

/** The API could not be reached (DNS, refused or reset connection, TLS), so no status exists. */
export class PlatformConnectionError extends PlatformError {
  override name = 'PlatformConnectionError';
  constructor(
    message: string,
    readonly method: string,
    readonly url: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** No complete response arrived within `timeoutMs`. */
export class PlatformTimeoutError extends PlatformConnectionError {
  override name = 'PlatformTimeoutError';
}

/** `Retry-After` as milliseconds from now: delay-seconds or an HTTP-date (RFC 9110 §10.2.3). */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

function isProblem(body: unknown): body is Problem {
  if (typeof body !== 'object' || body === null) return false;
  const { status, title, detail, code } = body as Record<string, unknown>;
  return (
    typeof status === 'number' &&
    typeof title === 'string' &&
    typeof detail === 'string' &&
    typeof code === 'string'
  );
}

function describeNonProblem(status: number, body: unknown): string {
  const text = typeof body === 'string' ? body.trim().slice(0, 200) : '';
  return `HTTP ${status} without a problem document${text ? `: ${text}` : ''}`;
}
