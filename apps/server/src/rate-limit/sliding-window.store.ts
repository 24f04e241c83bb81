import type { OnModuleDestroy } from '@nestjs/common';
import type { ThrottlerStorage } from '@nestjs/throttler';

/**
 * What a store's `increment` answers. @nestjs/throttler does not export this type from its
 * package entry, so it is read off the exported `ThrottlerStorage` rather than its dist files.
 */
type ThrottlerStorageRecord = Awaited<ReturnType<ThrottlerStorage['increment']>>;

export interface SlidingWindowRecord extends ThrottlerStorageRecord {
  /** Units left in the current window: after this request's if it was accepted. */
  remaining: number;
  /**
   * Epoch ms when the accepts in the way leave the window: accepted, when the oldest leaves (a
   * unit next frees); refused, when enough have left for this request's cost to fit.
   */
  resetAtMs: number;
  /** The units this request was charged, or would have been: its cost, at most the limit. */
  cost: number;
}

/**
 * Both stores: @nestjs/throttler's storage, whose `increment` also takes the request's cost (a
 * whole number of units, default 1) and charges it in one atomic step.
 */
export interface SlidingWindowStorage extends ThrottlerStorage {
  increment(
    key: string,
    ttl: number,
    limit: number,
    blockDuration: number,
    throttlerName: string,
    cost?: number,
  ): Promise<SlidingWindowRecord>;
}

interface Log {
  /** Accept times of the last accepted requests (at most `limit`), oldest at `head`. */
  times: Float64Array;
  head: number;
  size: number;
  limit: number;
}

/**
 * Rings start small, double as they fill and halve when a quarter full, and hold only the accept
 * times still inside the window: memory follows the traffic of the last window, not the
 * configured limit nor the number of requests ever made.
 */
const INITIAL_CAPACITY = 16;

/**
 * A sliding-log rate limiter behind @nestjs/throttler's storage interface.
 *
 * The throttler's built-in storage counts per fixed window, which at a window edge admits up to
 * twice the limit within 60 s. api.md forbids that: no 60-second window may accept more than the
 * limit. So we keep the accept times of the last `limit` units in a ring: a request of cost N is
 * accepted only if, once the accepts older than a window are dropped, N more fit, and then it
 * records N accepts at its time. That is exact, O(N) per request (amortised), and at most `limit`
 * numbers (fewer: the units of the last window) of memory per active key. Rejected requests are
 * not recorded.
 */
export class SlidingWindowStore implements SlidingWindowStorage, OnModuleDestroy {
  private readonly logs = new Map<string, Log>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
  ) {
    // Forget keys idle for a whole window so memory follows active clients only.
    this.sweeper = setInterval(() => this.sweep(), windowMs).unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.sweeper);
  }

  increment(
    key: string,
    _ttl: number,
    limit: number,
    _blockDuration?: number,
    _throttlerName?: string,
    cost?: number,
  ): Promise<SlidingWindowRecord> {
    return Promise.resolve(this.hit(key, limit, cost));
  }

  /**
   * Charges `cost` units. A cost above the limit is charged as the limit (a request that needs
   * the whole window to itself), so no operation is locked out for good.
   */
  hit(key: string, limit: number, cost = 1): SlidingWindowRecord {
    const now = this.now();
    const units = Math.min(cost, limit);
    const log = this.logFor(key, limit);
    const windowStart = now - this.windowMs;

    // Accept times that have left the window can no longer decide anything: drop them, so a key
    // holds at most its units of the last window, not every unit it ever spent (up to the
    // limit). Entries are in accept order, so they are a prefix of the ring.
    const expired = firstIndexSince(log, windowStart);
    log.head = (log.head + expired) % log.times.length;
    log.size -= expired;

    const needed = log.size + units;
    if (needed > limit) {
      // The oldest `needed - limit` accepts must leave the window before this request fits.
      const resetAtMs = at(log, needed - limit - 1) + this.windowMs;
      const wait = Math.max(1, Math.ceil((resetAtMs - now) / 1000));
      return {
        totalHits: needed,
        isBlocked: true,
        timeToExpire: wait,
        timeToBlockExpire: wait,
        remaining: limit - log.size,
        resetAtMs,
        cost: units,
      };
    }

    if (needed > log.times.length) {
      resize(log, Math.min(limit, Math.max(log.times.length * 2, needed)));
    } else if (
      // Stryker disable next-line EqualityOperator: halving a ring of the initial size keeps its size
      log.times.length > INITIAL_CAPACITY &&
      log.size * 4 <= log.times.length
    ) {
      // Traffic fell to a quarter of what the ring was sized for: give half of it back (keeping
      // room for this request).
      resize(log, Math.max(INITIAL_CAPACITY, Math.ceil(log.times.length / 2), needed));
    }
    for (let i = 0; i < units; i++) {
      log.times[(log.head + log.size) % log.times.length] = now;
      log.size++;
    }
    const resetAtMs = at(log, 0) + this.windowMs;
    return {
      totalHits: log.size,
      isBlocked: false,
      timeToExpire: Math.max(0, Math.ceil((resetAtMs - now) / 1000)),
      timeToBlockExpire: 0,
      remaining: limit - log.size,
      resetAtMs,
      cost: units,
    };
  }

  /** How many accept times are held for a key (for tests of memory use). */
  capacityOf(key: string): number {
    return this.logs.get(key)?.times.length ?? 0;
  }

  private logFor(key: string, limit: number): Log {
    const existing = this.logs.get(key);
    if (!existing) {
      const log: Log = {
        times: new Float64Array(Math.min(INITIAL_CAPACITY, limit)),
        head: 0,
        size: 0,
        limit,
      };
      this.logs.set(key, log);
      return log;
    }
    if (existing.limit !== limit) {
      // The organization's limit changed: keep the most recent accept times that still fit.
      const kept = Math.min(existing.size, limit);
      existing.head = (existing.head + existing.size - kept) % existing.times.length;
      existing.size = kept;
      existing.limit = limit;
      resize(existing, Math.max(kept, Math.min(INITIAL_CAPACITY, limit)));
    }
    return existing;
  }

  private sweep(): void {
    const windowStart = this.now() - this.windowMs;
    for (const [key, log] of this.logs) {
      if (log.size === 0 || at(log, log.size - 1) <= windowStart) this.logs.delete(key);
    }
  }
}

/** The i-th oldest accept time. */
function at(log: Log, i: number): number {
  return log.times[(log.head + i) % log.times.length]!;
}

/** Moves the entries, oldest first, into a ring of the given capacity. */
function resize(log: Log, capacity: number): void {
  const times = new Float64Array(capacity);
  // Stryker disable next-line EqualityOperator: a copy one slot further writes nothing that is read
  for (let i = 0; i < log.size; i++) times[i] = at(log, i);
  log.times = times;
  log.head = 0;
}

/** Entries are in accept order, so a binary search finds the first one inside the window. */
function firstIndexSince(log: Log, windowStart: number): number {
  let lo = 0;
  let hi = log.size;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (at(log, mid) > windowStart) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}
