import {
  createClient,
  PlatformApiError,
  PlatformConnectionError,
  PlatformError,
  PlatformRateLimitError,
  type Client,
  WEBHOOK_EVENT_TYPES,
} from '@platform/client';

/** The portal's only way to the API: the SDK, on this origin, with the signed-in member's token. */
export function apiClient(token: string): Client {
  // A 429 is shown at once with its wait (the page offers "Try again"), not waited out blind.
  return createClient({
    baseUrl: location.origin,
    token,
    userAgent: 'platform-portal',
    maxRetryAfterSeconds: 0,
    maxRetries: 1,
  });
}

/** What went wrong, in the terms a page shows it: each kind has its own message and way out. */
export type Failure =
  | { kind: 'network' }
  | { kind: 'rate_limited'; retryAfter: number | undefined }
  | { kind: 'unauthenticated' }
  | { kind: 'forbidden'; detail: string }
  | { kind: 'other'; detail: string };

export function classifyError(error: unknown): Failure {
  if (error instanceof PlatformRateLimitError)
    return { kind: 'rate_limited', retryAfter: error.retryAfter };
  if (error instanceof PlatformApiError && error.status === 401) return { kind: 'unauthenticated' };
  if (error instanceof PlatformApiError && error.status === 403)
    return { kind: 'forbidden', detail: error.detail };
  if (error instanceof PlatformConnectionError || error instanceof TypeError)
    return { kind: 'network' };
  return { kind: 'other', detail: describeError(error) };
}

/** A message for the user: the API's own problem detail (and field errors), or a plain fallback. */
export function describeError(error: unknown): string {
  if (error instanceof PlatformApiError && !error.problem) return describeBareFailure(error);
  if (error instanceof PlatformApiError) {
    // A field error the detail already states (`redirect_uris.0: must use https`) is not repeated.
    const fields = (error.problem?.errors ?? [])
      .filter((e) => !error.detail?.includes(e.message))
      .map((e) => `${e.path.replace(/^body\./, '')}: ${e.message}`);
    return [error.detail, ...fields].filter(Boolean).join(' — ');
  }
  if (error instanceof PlatformError || error instanceof Error) return error.message;
  return 'Something went wrong.';
}

/**
 * An answer with no problem document (a proxy's error page, a crash before the API could answer):
 * what it means for the user, and the `X-Request-Id` to quote, as the API's own 500s give it.
 */
function describeBareFailure(error: PlatformApiError): string {
  const what =
    error.status >= 500
      ? `Something went wrong on the server (HTTP ${error.status}). Try again in a moment.`
      : `The server refused this request (HTTP ${error.status}) without saying why.`;
  return error.requestId
    ? `${what} If it keeps happening, quote the request id ${error.requestId} to support.`
    : what;
}

export function isUnauthenticated(error: unknown): boolean {
  return error instanceof PlatformApiError && error.status === 401;
}

/** Every event type an endpoint can subscribe to, from the contract through the SDK. */
export const EVENT_TYPES = WEBHOOK_EVENT_TYPES;

/** Hours during which a rotated webhook secret still signs deliveries (the API's documented window). */
export const WEBHOOK_SECRET_OVERLAP_HOURS = 24;

export function formatDate(value: string | null): string {
  if (!value) return '—';
  return new Date(value).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}
