/**
 * What every SDK method returns: a promise of the response body that can also give the whole
 * response (status, headers, request id), as stripe-node's and openai-node's `withResponse()`.
 */

/** A 2xx response with its parsed body, from `withResponse()`. */
export interface RawResponse<T> {
  /** The parsed body, the same value the plain call resolves to. */
  data: T;
  status: number;
  /** Response headers: `X-RateLimit-Remaining`, `Idempotent-Replayed`, `Link`, `Location`, … */
  headers: Headers;
  /** The response's `X-Request-Id`: quote it to support. */
  requestId: string | undefined;
  /** How many retries it took to get this response (0: the first attempt). */
  retriesTaken: number;
}

/**
 * A `Promise<T>` of the body; `withResponse()` resolves to the `RawResponse` instead. The body
 * promise is derived only when awaited, so calling just `withResponse()` leaves no rejected
 * promise unhandled.
 */
export class PlatformPromise<T> extends Promise<T> {
  #raw: Promise<RawResponse<T>>;
  #data: Promise<T> | undefined;

  constructor(raw: Promise<RawResponse<T>>) {
    // The executor's value is never read: then/catch/finally go to the derived body promise.
    super((resolve) => resolve(undefined as T));
    this.#raw = raw;
  }

  // `then` on a subclass would otherwise construct another PlatformPromise with an executor.
  static override get [Symbol.species](): PromiseConstructor {
    return Promise;
  }

  /** The body together with status, headers, request id and retries taken. */
  withResponse(): Promise<RawResponse<T>> {
    return this.#raw;
  }

  #body(): Promise<T> {
    this.#data ??= this.#raw.then((raw) => raw.data);
    return this.#data;
  }

  override then<A = T, B = never>(
    onFulfilled?: ((value: T) => A | PromiseLike<A>) | null,
    onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): Promise<A | B> {
    return this.#body().then(onFulfilled, onRejected);
  }

  override catch<B = never>(
    onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): Promise<T | B> {
    return this.#body().catch(onRejected);
  }

  override finally(onFinally?: (() => void) | null): Promise<T> {
    return this.#body().finally(onFinally);
  }
}

/** Options of `autoPagingToArray`. */
export interface AutoPagingToArrayOptions {
  /** The most items to collect; pages stop being fetched once it is reached. Required, at most 10000. */
  limit: number;
}

/** The most `autoPagingToArray` collects: a larger list is walked with `for await`. */
export const AUTO_PAGING_TO_ARRAY_MAX = 10_000;

/**
 * What a list method returns: the first page when awaited, and, through `for await`, every item
 * of every page (one request per page, with the same filters and page size), as stripe-node's
 * and openai-node's list promises.
 */
export class PagePromise<TPage, TItem>
  extends PlatformPromise<TPage>
  implements AsyncIterable<TItem>
{
  #items: () => AsyncIterableIterator<TItem>;

  constructor(raw: Promise<RawResponse<TPage>>, items: () => AsyncIterableIterator<TItem>) {
    super(raw);
    this.#items = items;
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<TItem> {
    return this.#items();
  }

  /** The first `limit` items across pages, in one array. */
  async autoPagingToArray(options: AutoPagingToArrayOptions): Promise<TItem[]> {
    const limit = options?.limit;
    if (
      typeof limit !== 'number' ||
      !Number.isInteger(limit) ||
      limit < 1 ||
      limit > AUTO_PAGING_TO_ARRAY_MAX
    )
      throw new TypeError(
        `autoPagingToArray: \`limit\` must be an integer from 1 to ${AUTO_PAGING_TO_ARRAY_MAX}, got ${String(limit)}; walk longer lists with for await.`,
      );
    const items: TItem[] = [];
    for await (const item of this) {
      items.push(item);
      if (items.length >= limit) break;
    }
    return items;
  }
}
