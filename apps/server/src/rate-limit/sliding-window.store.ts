import type { OnModuleDestroy } from '@nestjs/common';
import type { ThrottlerStorage } from '@nestjs/throttler';
import type { ThrottlerStorageRecord } from '@nestjs/throttler/dist/throttler-storage-record.interface';

export interface SlidingWindowRecord extends ThrottlerStorageRecord {
  /** Accepted requests left in the current window, after this one. */
  remaining: number;
  /** Epoch ms when the oldest accepted request leaves the window, i.e. when a slot next frees. */
  resetAtMs: number;
}

interface Log {
  /** Accept times of the last `limit` accepted requests, oldest at `head` once full. */
  times: Float64Array;
  head: number;
  size: number;
}

/**
 * A sliding-log rate limiter behind @nestjs/throttler's storage interface.
 *
 * The throttler's built-in storage counts per fixed window, which at a window edge admits up to
 * twice the limit within 60 s. api.md forbids that: no 60-second window may accept more than the
 * limit. So we keep the accept times of the last `limit` requests in a ring: a request is accepted
 * only if the oldest of them is at least a window old. That is exact, O(1) per request, and
 * `limit` numbers of memory per key. Rejected requests are not recorded.
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

    if (log.size === limit && log.times[log.head]! > windowStart) {
      const resetAtMs = log.times[log.head]! + this.windowMs;
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

    // Accept: overwrite the oldest entry (or append while the ring is filling).
    const slot = (log.head + log.size) % limit;
    if (log.size === limit) {
      log.times[log.head] = now;
      log.head = (log.head + 1) % limit;
    } else {
      log.times[slot] = now;
      log.size++;
    }
    const inWindow = this.countSince(log, limit, windowStart);
    const oldest = this.oldestSince(log, limit, windowStart) ?? now;
    const resetAtMs = oldest + this.windowMs;
    return {
      totalHits: inWindow,
      isBlocked: false,
      timeToExpire: Math.max(0, Math.ceil((resetAtMs - now) / 1000)),
      timeToBlockExpire: 0,
      remaining: limit - inWindow,
      resetAtMs,
    };
  }

  private logFor(key: string, limit: number): Log {
    const existing = this.logs.get(key);
    if (existing && existing.times.length === limit) return existing;
    // New key, or the organization's limit changed: keep the most recent accept times that fit.
    const log: Log = { times: new Float64Array(limit), head: 0, size: 0 };
    if (existing) {
      const kept = Math.min(existing.size, limit);
      for (let i = existing.size - kept; i < existing.size; i++) {
        log.times[log.size++] = existing.times[(existing.head + i) % existing.times.length]!;
      }
    }
    this.logs.set(key, log);
    return log;
  }

  /** Entries are in accept order, so a binary search finds the first one inside the window. */
  private firstIndexSince(log: Log, limit: number, windowStart: number): number {
    let lo = 0;
    let hi = log.size;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (log.times[(log.head + mid) % limit]! > windowStart) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

  private countSince(log: Log, limit: number, windowStart: number): number {
    return log.size - this.firstIndexSince(log, limit, windowStart);
  }

  private oldestSince(log: Log, limit: number, windowStart: number): number | undefined {
    const i = this.firstIndexSince(log, limit, windowStart);
    return i < log.size ? log.times[(log.head + i) % limit] : undefined;
  }

  private sweep(): void {
    const windowStart = this.now() - this.windowMs;
    for (const [key, log] of this.logs) {
      const newest = log.times[(log.head + log.size - 1) % log.times.length]!;
      if (log.size === 0 || newest <= windowStart) this.logs.delete(key);
    }
  }
}
