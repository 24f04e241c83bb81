/**
 * `follow` on a namespace with a change feed (`client.events.follow({ after })`): an async
 * iterator over every change after a cursor, long-polling when caught up and resuming from the
 * last cursor, so a sync loop is one `for await`. Generic over the feed route (the route table
 * flags it `feed`), like `listAll` over list routes.
 */

/** One read of a feed: its changes, where the next read starts, and whether more are waiting. */
export interface FeedPage<T> {
  data: T[];
  next_cursor: string;
  has_more: boolean;
}

/** What `follow` takes: the feed's query (`after`, `limit`, `type`, `wait`) and how to stop. */
export interface FollowOptions {
  /** Start after this cursor: an export's `cursor`, a saved `follower.cursor`, or a position. Default `'0'`. */
  after?: string;
  /** Changes per read. */
  limit?: number;
  /** Only these types (comma-separated), as the feed's `type`. */
  type?: string;
  /** How long one read waits for a change when caught up. Default `'30s'`. */
  wait?: string;
  /** End the iteration once a read finds nothing new, instead of waiting forever. Default false. */
  untilCaughtUp?: boolean;
  /** Ends the iteration (and the read in flight) when aborted. */
  signal?: AbortSignal;
}

/**
 * The iterator `follow` returns. `cursor` is the place after the last change yielded (or the
 * start): save it after you apply a change, and `follow({ after: cursor })` resumes exactly
 * there, with nothing skipped and nothing repeated.
 */
export class FeedFollower<
  T extends { position: number | null },
> implements AsyncIterableIterator<T> {
  cursor: string;
  #buffer: T[] = [];
  #pageCursor: string | undefined;
  #done = false;

  constructor(
    private readonly read: (
      query: Record<string, string | number>,
      signal?: AbortSignal,
    ) => Promise<FeedPage<T>>,
    private readonly options: FollowOptions = {},
  ) {
    this.cursor = options.after ?? '0';
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  async next(): Promise<IteratorResult<T, undefined>> {
    for (;;) {
      const item = this.#buffer.shift();
      if (item !== undefined) {
        this.cursor = item.position === null ? this.cursor : String(item.position);
        // The page's end may lie past its last change (types this token does not read).
        if (this.#buffer.length === 0 && this.#pageCursor !== undefined) {
          this.cursor = this.#pageCursor;
          this.#pageCursor = undefined;
        }
        return { value: item, done: false };
      }
      if (this.#done || this.options.signal?.aborted) return this.return();
      let page: FeedPage<T>;
      try {
        page = await this.read(this.query(), this.options.signal);
      } catch (error) {
        if (this.options.signal?.aborted) return this.return();
        throw error;
      }
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

  private query(): Record<string, string | number> {
    const { limit, type, wait, untilCaughtUp } = this.options;
    return {
      after: this.cursor,
      ...(limit !== undefined && { limit }),
      ...(type !== undefined && { type }),
      // Caught up is known from one read that does not wait; a live follower waits.
      wait: wait ?? (untilCaughtUp ? '0s' : '30s'),
    };
  }
}
