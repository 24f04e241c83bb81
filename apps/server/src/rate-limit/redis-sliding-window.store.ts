import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { SlidingWindowRecord, SlidingWindowStorage } from './sliding-window.store';

/**
 * The same sliding log as `SlidingWindowStore`, shared by every instance through Redis: a sorted
 * set of accept times per key (one member per unit), checked and updated in one Lua script, so a
 * request's whole cost is charged atomically however requests spread over instances, and no 60 s
 * window ever accepts more than the limit. The clock is Redis's (`TIME`), so instances with
 * skewed clocks still agree.
 *
 * ARGV: window (ms), limit, a random member suffix, cost (capped at the limit, as the memory
 * store does). Returns { accepted (0|1), units in the window, the accept time (ms) whose leaving
 * decides the reset, now (ms), units charged }: accepted, the oldest; refused, the one that must
 * leave before the cost fits.
 */
const SLIDING_LOG = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local cost = math.min(tonumber(ARGV[4]), limit)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local count = redis.call('ZCARD', KEYS[1])
local accepted = 0
local decides = 0
if count + cost <= limit then
  for i = 1, cost do
    redis.call('ZADD', KEYS[1], now, now .. ':' .. ARGV[3] .. ':' .. i)
  end
  redis.call('PEXPIRE', KEYS[1], window)
  count = count + cost
  accepted = 1
else
  decides = count + cost - limit - 1
end
local oldest = redis.call('ZRANGE', KEYS[1], decides, decides, 'WITHSCORES')[2] or now
return { accepted, count, tonumber(oldest), now, cost }
`;

type SlidingLogCommand = (
  key: string,
  windowMs: number,
  limit: number,
  member: string,
  cost: number,
) => Promise<[number, number, number, number, number]>;

export class RedisSlidingWindowStore implements SlidingWindowStorage {
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
  async increment(
    key: string,
    _ttl: number,
    limit: number,
    _blockDuration?: number,
    _throttlerName?: string,
    cost = 1,
  ): Promise<SlidingWindowRecord> {
    const [accepted, count, decides, now, units] = await this.slidingLog(
      `${this.prefix}:ratelimit:${key}`,
      this.windowMs,
      limit,
      randomBytes(6).toString('base64url'),
      cost,
    );
    const resetAtMs = decides + this.windowMs;
    const wait = Math.max(1, Math.ceil((resetAtMs - now) / 1000));
    return accepted
      ? {
          totalHits: count,
          isBlocked: false,
          timeToExpire: Math.max(0, Math.ceil((resetAtMs - now) / 1000)),
          timeToBlockExpire: 0,
          remaining: Math.max(0, limit - count),
          resetAtMs,
          cost: units,
        }
      : {
          totalHits: count + units,
          isBlocked: true,
          timeToExpire: wait,
          timeToBlockExpire: wait,
          remaining: Math.max(0, limit - count),
          resetAtMs,
          cost: units,
        };
  }
}
