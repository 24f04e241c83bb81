import type { OnModuleDestroy } from '@nestjs/common';
import type { ThrottlerStorage } from '@nestjs/throttler';

/**
 * What a store's `increment` answers. @nestjs/throttler does not export this type from its
 * package entry, so it is read off the exported `ThrottlerStorage` rather than its dist files.
 */
type ThrottlerStorageRecord = Awaited<ReturnType<ThrottlerStorage['increment']>>;

export interface SlidingWindowRecord extends ThrottlerStorageRecord {
  /** Accepted requests left in the current window, after this one. */
  remaining: number;
  /** Epoch ms when the oldest accepted request leaves the window, i.e. when a slot next frees. */
  resetAtMs: number;
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
 * limit. So we keep the accept times of the last `limit` requests in a ring: a request is accepted
 * only if the oldest of them is at least a window old. That is exact, O(1) per request (amortised),
 * and at most `limit` numbers (fewer: the accepts of the last window) of memory per active key.
 * Rejected requests are not recorded.
 */
export class SlidingWindowStore implements ThrottlerStorage, OnModuleDestroy {
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

  increment(key: string, _ttl: number, limit: number): Promise<SlidingWindowRecord> {
    return Promise.resolve(this.hit(key, limit));
  }

  hit(key: string, limit: number): SlidingWindowRecord {
    const now = this.now();
    const log = this.logFor(key, limit);
    const windowStart = now - this.windowMs;

    // Accept times that have left the window can no longer decide anything: drop them, so a key
    // holds at most its requests of the last window, not every request it ever made (up to the
    // limit). Entries are in accept order, so they are a prefix of the ring.
    const expired = firstIndexSince(log, windowStart);
    log.head = (log.head + expired) % log.times.length;
    log.size -= expired;

    if (log.size === limit) {
      // Every one of the last `limit` accepts is inside the window.
      const resetAtMs = at(log, 0) + this.windowMs;
      const wait = Math.max(1, Math.ceil((resetAtMs - now) / 1000));
      return {
        totalHits: limit + 1,
        isBlocked: true,
        timeToExpire: wait,
        timeToBlockExpire: wait,
        remaining: 0,
        resetAtMs,
      };
    }

    if (log.size === log.times.length) {
      resize(log, Math.min(log.times.length * 2, limit));
    } else if (
      // Stryker disable next-line EqualityOperator: halving a ring of the initial size keeps its size
      log.times.length > INITIAL_CAPACITY &&
      log.size * 4 <= log.times.length
    ) {
      // Traffic fell to a quarter of what the ring was sized for: give half of it back.
      resize(log, Math.max(INITIAL_CAPACITY, Math.ceil(log.times.length / 2)));
    }
    log.times[(log.head + log.size) % log.times.length] = now;
    log.size++;
    const resetAtMs = at(log, 0) + this.windowMs;
    return {
      totalHits: log.size,
      isBlocked: false,
      timeToExpire: Math.max(0, Math.ceil((resetAtMs - now) / 1000)),
      timeToBlockExpire: 0,
      remaining: limit - log.size,
      resetAtMs,
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
