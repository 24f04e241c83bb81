import { randomBytes } from 'node:crypto';
import type { ThrottlerStorage } from '@nestjs/throttler';
import type { Redis } from 'ioredis';
import type { SlidingWindowRecord } from './sliding-window.store';

/**
 * The same sliding log as `SlidingWindowStore`, shared by every instance through Redis: a sorted
 * set of accept times per key, checked and updated in one Lua script, so the check is atomic
 * however requests spread over instances, and no 60 s window ever accepts more than the limit.
 * The clock is Redis's (`TIME`), so instances with skewed clocks still agree.
 *
 * Returns { accepted (0|1), accepted requests in the window, oldest accept time (ms), now (ms) }.
 */
const SLIDING_LOG = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local count = redis.call('ZCARD', KEYS[1])
local accepted = 0
if count < limit then
  redis.call('ZADD', KEYS[1], now, now .. ':' .. ARGV[3])
  redis.call('PEXPIRE', KEYS[1], window)
  count = count + 1
  accepted = 1
end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')[2] or now
return { accepted, count, tonumber(oldest), now }
`;

type SlidingLogCommand = (
  key: string,
  windowMs: number,
  limit: number,
  member: string,
) => Promise<[number, number, number, number]>;

export class RedisSlidingWindowStore implements ThrottlerStorage {
  private readonly slidingLog: SlidingLogCommand;

  constructor(
    redis: Redis,
    private readonly prefix: string,
    private readonly windowMs: number,
  ) {
    redis.defineCommand('platformSlidingLog', { numberOfKeys: 1, lua: SLIDING_LOG });
    const command = (redis as unknown as { platformSlidingLog: SlidingLogCommand })
      .platformSlidingLog;
    this.slidingLog = command.bind(redis);
  }

  /** Rejects when Redis is unreachable: the guard answers 503 (fails closed, never unlimited). */
  async increment(key: string, _ttl: number, limit: number): Promise<SlidingWindowRecord> {
    const [accepted, count, oldest, now] = await this.slidingLog(
      `${this.prefix}:ratelimit:${key}`,
      this.windowMs,
      limit,
      randomBytes(6).toString('base64url'),
    );
    const resetAtMs = oldest + this.windowMs;
    const wait = Math.max(1, Math.ceil((resetAtMs - now) / 1000));
    return accepted
      ? {
          totalHits: count,
          isBlocked: false,
          timeToExpire: Math.max(0, Math.ceil((resetAtMs - now) / 1000)),
          timeToBlockExpire: 0,
          remaining: Math.max(0, limit - count),
          resetAtMs,
        }
      : {
          totalHits: count + 1,
          isBlocked: true,
          timeToExpire: wait,
          timeToBlockExpire: wait,
          remaining: 0,
          resetAtMs,
        };
  }
}
