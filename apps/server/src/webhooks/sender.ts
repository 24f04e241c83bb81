import http from 'node:http';
import https from 'node:https';
import { WEBHOOK_RESPONSE_BODY_LIMIT } from '@platform/contract';
import type { Clock } from '../common/clock';
import { assertLiteralHostAllowed, guardedLookup, type UrlPolicy } from './url-guard';

export interface OutgoingWebhook {
  url: string;
  headers: Record<string, string>;
  body: string;
}

export interface AttemptResult {
  /** The response status; null when none arrived (refused, timed out, blocked). */
  statusCode: number | null;
  latencyMs: number;
  /** The first 4 KiB of the response body. */
  responseBody: string | null;
  error: string | null;
  /** From a 429 or 503 `Retry-After`, in milliseconds. */
  retryAfterMs: number | null;
  /** No answer within the timeout: the attempt held its slot the whole time. */
  timedOut?: true;
  /**
   * Every header of the request, as written to the connection (Node adds none to these); absent
   * when no request was made (an invalid or refused URL).
   */
  requestHeaders?: Record<string, string>;
}

/**
 * POSTs webhook deliveries with Node's own HTTP client. No redirect is followed (Node never
 * does), keep-alive agents reuse idle connections, and every connection resolves its host
 * through `guardedLookup`, so the socket goes to the address that was checked.
 *
 * An attempt's outcome is the status the endpoint answers within the timeout (a 2xx is
 * success), as Standard Webhooks, Stripe and Svix judge it: the body is read only for the
 * record, up to 4 KiB, and a body that is larger, slow or cut off changes nothing.
 *
 * The agents have no socket limit on purpose: Node's limit is per host:port, shared by every
 * endpoint (of every organization) on that host, so an attempt would queue inside the agent
 * behind other tenants' slow requests, with that wait in its latency and its timeout. The
 * dispatchers already bound attempts in flight (in all, per organization, per endpoint), so
 * an attempt always gets a connection at once and its latency is its endpoint's alone.
 */
export class WebhookSender {
  private readonly agents: { http: http.Agent; https: https.Agent };

  constructor(
    private readonly policy: UrlPolicy,
    private readonly timeoutMs: number,
    /** Reads "now" for an HTTP-date `Retry-After`. */
    private readonly clock: Clock,
  ) {
    const options = { keepAlive: true, lookup: guardedLookup(policy) };
    this.agents = { http: new http.Agent(options), https: new https.Agent(options) };
  }

  send(request: OutgoingWebhook): Promise<AttemptResult> {
    const started = performance.now();
    let url: URL;
    try {
      url = new URL(request.url);
      if (url.protocol !== 'https:' && !(url.protocol === 'http:' && this.policy.allowPrivate)) {
        throw new Error('the URL must use https');
      }
      assertLiteralHostAllowed(url, this.policy);
    } catch (error) {
      return Promise.resolve(noResponse(describeError(error), 0));
    }
    const secure = url.protocol === 'https:';
    return new Promise((resolve) => {
      let settled = false;
      const finish = (result: AttemptResult) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve({ ...result, requestHeaders: headers });
      };
      const elapsed = () => Math.round(performance.now() - started);
      const headers = wireHeaders(request, url);
      const req = (secure ? https : http).request(url, {
        method: 'POST',
        agent: secure ? this.agents.https : this.agents.http,
        headers,
      });
      // The endpoint's answer is its status: once it has arrived, the rest of the attempt only
      // reads the first 4 KiB of the body for the record, and the timer ends that reading.
      let answered: ((cause: string) => void) | undefined;
      const timer = setTimeout(() => {
        if (answered) answered('timeout');
        else req.destroy(new TimeoutError(`no response within ${this.timeoutMs / 1000} s`));
      }, this.timeoutMs);

      req.on('error', (error) =>
        finish({
          ...noResponse(describeError(error), elapsed()),
          ...(error instanceof TimeoutError && { timedOut: true as const }),
        }),
      );
      req.on('response', (res) => {
        const latencyMs = elapsed();
        const statusCode = res.statusCode ?? null;
        const kept: Buffer[] = [];
        let keptBytes = 0;
        answered = () => {
          finish({
            statusCode,
            latencyMs,
            responseBody: keptBytes ? Buffer.concat(kept).toString('utf8') : null,
            error: null,
            retryAfterMs:
              statusCode === 429 || statusCode === 503
                ? parseRetryAfter(res.headers['retry-after'], this.clock.nowMs())
                : null,
          });
          // A body still coming is not read on: the connection is dropped rather than drained.
          if (!res.complete) res.destroy();
        };
        const done = answered;
        res.on('data', (chunk: Buffer) => {
          if (keptBytes >= WEBHOOK_RESPONSE_BODY_LIMIT) return;
          const part = chunk.subarray(0, WEBHOOK_RESPONSE_BODY_LIMIT - keptBytes);
          kept.push(part);
          keptBytes += part.length;
          if (keptBytes >= WEBHOOK_RESPONSE_BODY_LIMIT) done('enough');
        });
        res.on('end', () => done('end'));
        res.on('close', () => done('closed'));
        res.on('error', () => undefined);
      });
      req.end(request.body);
    });
  }

  close(): void {
    this.agents.http.destroy();
    this.agents.https.destroy();
  }
}

class TimeoutError extends Error {}

/**
 * Every header of the request: Host and Connection set here rather than left to Node (which adds
 * the same values otherwise), so the attempt can record the whole set it sent.
 */
function wireHeaders(request: OutgoingWebhook, url: URL): Record<string, string> {
  return {
    ...request.headers,
    'content-length': String(Buffer.byteLength(request.body)),
    host: url.host,
    connection: 'keep-alive',
  };
}

/** `Retry-After` as seconds or an HTTP date (RFC 9110), in milliseconds from now. */
export function parseRetryAfter(value: string | undefined, now: number): number | null {
  if (!value) return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

function noResponse(error: string, latencyMs: number): AttemptResult {
  return { statusCode: null, latencyMs, responseBody: null, error, retryAfterMs: null };
}

const ERROR_REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset by the endpoint',
  ENOTFOUND: 'the host name could not be resolved',
};

const TLS_ERRORS = new Set([
  'CERT_HAS_EXPIRED',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/** A short, customer-readable reason; never a stack trace. */
function describeError(error: unknown): string {
  const e = error as NodeJS.ErrnoException | undefined;
  const code = e?.code ?? '';
  if (ERROR_REASONS[code]) return ERROR_REASONS[code];
  if (TLS_ERRORS.has(code)) return `TLS certificate rejected (${code})`;
  return e?.message ?? String(error);
}
