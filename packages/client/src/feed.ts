/**
 * `follow` on a namespace with a change feed (`client.changes.follow({ after })`): an async
 * iterator over every change after a cursor, long-polling when caught up and resuming from the
 * last cursor, so a sync loop is one `for await`. Generic over the feed route (the route table
 * flags it `feed`), like `listAll` over list routes. It never gives up on what is retryable (the
 * server restarting, a 5xx, a 429): it backs off and reads again from where it was.
 */
import {
  PlatformApiError,
  PlatformConnectionError,
  type PlatformError,
  parseRetryAfter,
} from './errors';

/** One read of a feed: its changes, where the next read starts, and whether more are waiting. */
export interface FeedPage<T> {
  data: T[];
  next_cursor: string;
  has_more: boolean;
}

/**
 * A place in the feed as the API returns it: a `next_cursor`, an export's `cursor`, an event's
 * `cursor` (opaque strings bound to their organization, `'42.Xk3…'`: the number before the dot is
 * the position), `'0'` for the start of the feed, or `'oldest'` for the oldest change still kept.
 */
export type FeedCursor = string;

/** What `follow` takes: where to start, the feed's query, how to stop and how to retry. */
export interface FollowOptions {
  /**
   * Required: start after this cursor (an export's `cursor`, a saved `follower.cursor`, an
   * event's `cursor`), or `'oldest'` to start from the oldest change still kept.
   */
  after: FeedCursor;
  /** End once the cursor reaches this one (a reconciliation's end), instead of reading on. */
  until?: FeedCursor;
  /** Changes per read. */
  limit?: number;
  /** Only these types (comma-separated), as the feed's `type`. */
  type?: string;
  /** How long one read waits for a change when caught up. Default `'30s'`. */
  wait?: string;
  /** End the iteration once a read finds nothing new, instead of waiting forever. Default false. */
  untilCaughtUp?: boolean;
  /** Ends the iteration (and the read in flight, or the wait before a retry) when aborted. */
  signal?: AbortSignal;
  /** The longest wait between retries, in seconds (a `Retry-After` may ask up to 60). Default 10. */
  maxRetryDelay?: number;
  /** Give up (throw the last error) after failing this many seconds in a row. Default: never. */
  giveUpAfter?: number;
  /** Called before each wait to retry: the error, the attempt (1, 2, …) and the wait in seconds. */
  onRetry?: (error: PlatformError, attempt: number, delaySeconds: number) => void;
  /**
   * Called with the cursor each time the follower has yielded every change committed when it last
   * read (a read answered `has_more: false`), before it reads (and waits) again.
   */
  onCaughtUp?: (cursor: string) => void;
}

const OLDEST = 'oldest';
/** A cursor as the API issues it: the position, a dot, the organization's tag; or `0`. */
const CURSOR = /^(0|(0|[1-9][0-9]{0,17})\.[A-Za-z0-9_-]{10})$/;
/** The longest `Retry-After` a follower honours, in seconds. */
const MAX_RETRY_AFTER = 60;

/** `after` as the feed takes it; a TypeError naming the parameter for anything else. */
export function feedCursor(after: unknown, name = 'after'): string {
  if (typeof after === 'string' && (after === OLDEST || CURSOR.test(after))) return after;
  const given = typeof after === 'bigint' ? String(after) : (JSON.stringify(after) ?? typeof after);
  throw new TypeError(
    after === undefined
      ? "follow needs `after`: a cursor (an export's `cursor`, a saved `follower.cursor`, an event's `cursor`) or 'oldest' to start from the oldest change kept"
      : /^"?[0-9]+"?$/.test(given)
        ? `${name} must be a cursor, not a position: cursors are the strings the API returns (a \`next_cursor\`, an export's \`cursor\`, an event's \`cursor\`), got ${given}`
        : `${name} must be a cursor the API returned (a \`next_cursor\`, an export's \`cursor\`, an event's \`cursor\`), '0' or 'oldest', got ${given}`,
  );
}

/** Whether reading again could succeed: no answer at all, a 5xx, or a 429. */
function retryable(error: unknown): error is PlatformError {
  if (error instanceof PlatformConnectionError) return true;
  return error instanceof PlatformApiError && (error.status >= 500 || error.status === 429);
}

/** Resolves after `ms`, or at once when `signal` aborts. */
function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * The iterator `follow` returns. `cursor` is the place after the last change yielded (or the
 * start): save it after you apply a change, and `follow({ after: cursor })` resumes exactly
 * there, with nothing skipped and nothing repeated.
 */
export class FeedFollower<T extends { cursor: string | null }> implements AsyncIterableIterator<T> {
  cursor: string;
  #buffer: T[] = [];
  #pageCursor: string | undefined;
  #done = false;
  #failures = 0;
  #failingSince: number | undefined;
  #caughtUp = false;
  readonly #until: string | undefined;

  constructor(
    private readonly read: (
      query: Record<string, string | number>,
      signal?: AbortSignal,
    ) => Promise<FeedPage<T>>,
    private readonly options: FollowOptions,
  ) {
    this.cursor = feedCursor((options as Partial<FollowOptions> | undefined)?.after);
    this.#until = options.until === undefined ? undefined : feedCursor(options.until, 'until');
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  async next(): Promise<IteratorResult<T, undefined>> {
    for (;;) {
      const item = this.#buffer.shift();
      if (item !== undefined) {
        this.cursor = item.cursor ?? this.cursor;
        // The page's end may lie past its last change (types this token does not read).
        if (this.#buffer.length === 0 && this.#pageCursor !== undefined) {
          this.cursor = this.#pageCursor;
          this.#pageCursor = undefined;
        }
        return { value: item, done: false };
      }
      if (this.#caughtUp) {
        this.#caughtUp = false;
        this.options.onCaughtUp?.(this.cursor);
      }
      if (this.#done || this.options.signal?.aborted || this.cursor === this.#until)
        return this.return();
      const page = await this.readPage();
      if (page === undefined) continue;
      this.#caughtUp = !page.has_more;
      if (page.data.length === 0) {
        this.cursor = page.next_cursor;
        if (this.options.untilCaughtUp && !page.has_more) this.#done = true;
        continue;
      }
      this.#buffer = [...page.data];
      this.#pageCursor = page.next_cursor;
    }
  }

  return(): Promise<IteratorResult<T, undefined>> {
    this.#done = true;
    this.#buffer = [];
    return Promise.resolve({ value: undefined, done: true });
  }

  /** One read; undefined after a retryable failure it waited out (or an abort). */
  private async readPage(): Promise<FeedPage<T> | undefined> {
    try {
      const page = await this.read(this.query(), this.options.signal);
      this.#failures = 0;
      this.#failingSince = undefined;
      return page;
    } catch (error) {
      if (this.options.signal?.aborted) return undefined;
      if (!retryable(error)) throw error;
      this.#failingSince ??= Date.now();
      const { giveUpAfter } = this.options;
      if (giveUpAfter !== undefined && Date.now() - this.#failingSince >= giveUpAfter * 1000)
        throw error;
      this.#failures += 1;
      // The last wait ends at the give-up time, where one more read is made.
      const left =
        giveUpAfter === undefined
          ? Infinity
          : giveUpAfter - (Date.now() - this.#failingSince) / 1000;
      const delay = Math.min(this.retryDelay(error), left);
      this.options.onRetry?.(error, this.#failures, delay);
      await pause(delay * 1000, this.options.signal);
      return undefined;
    }
  }

  /**
   * Seconds to wait before the next read: what `Retry-After` asked (up to a minute), else capped
   * exponential backoff from half a second with jitter (a random point in its upper half).
   */
  private retryDelay(error: PlatformError): number {
    const asked =
      error instanceof PlatformApiError
        ? parseRetryAfter(error.headers.get('retry-after'))
        : undefined;
    if (asked !== undefined) return Math.min(Math.max(asked, 0) / 1000, MAX_RETRY_AFTER);
    const cap = Math.min(this.options.maxRetryDelay ?? 10, 0.5 * 2 ** (this.#failures - 1));
    return cap / 2 + Math.random() * (cap / 2);
  }

  private query(): Record<string, string | number> {
    const { limit, type, wait, untilCaughtUp } = this.options;
    return {
      after: this.cursor,
      ...(this.#until !== undefined && { until: this.#until }),
      ...(limit !== undefined && { limit }),
      ...(type !== undefined && { type }),
      // Caught up is known from one read that does not wait; a live follower waits.
      wait: wait ?? (untilCaughtUp ? '0s' : '30s'),
    };
  }
}
