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

/** Rings start small and double as they fill, so memory follows traffic, not the configured limit. */
const INITIAL_CAPACITY = 16;

/**
 * A sliding-log rate limiter behind @nestjs/throttler's storage interface.
 *
 * The throttler's built-in storage counts per fixed window, which at a window edge admits up to
 * twice the limit within 60 s. api.md forbids that: no 60-second window may accept more than the
 * limit. So we keep the accept times of the last `limit` requests in a ring: a request is accepted
 * only if the oldest of them is at least a window old. That is exact, O(1) per request (amortised),
 * and at most `limit` numbers of memory per active key. Rejected requests are not recorded.
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

    if (log.size === limit && at(log, 0) > windowStart) {
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

    if (log.size === limit) {
      // Full: the new accept replaces the oldest one, which has left the window.
      log.times[log.head] = now;
      log.head = (log.head + 1) % log.times.length;
    } else {
      if (log.size === log.times.length) resize(log, Math.min(log.times.length * 2, limit));
      log.times[(log.head + log.size) % log.times.length] = now;
      log.size++;
    }
    const first = firstIndexSince(log, windowStart);
    const inWindow = log.size - first;
    const resetAtMs = (first < log.size ? at(log, first) : now) + this.windowMs;
    return {
      totalHits: inWindow,
      isBlocked: false,
      timeToExpire: Math.max(0, Math.ceil((resetAtMs - now) / 1000)),
      timeToBlockExpire: 0,
      remaining: limit - inWindow,
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
