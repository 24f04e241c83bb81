import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { startRedis } from '../testing/redis';
import { RedisSlidingWindowStore } from './redis-sliding-window.store';

describe(RedisSlidingWindowStore.name, () => {
  let redis: Awaited<ReturnType<typeof startRedis>>;
  let clients: Redis[];
  /** A store on its own connection, as each server instance has; every test has its own prefix. */
  let store: (windowMs?: number) => RedisSlidingWindowStore;

  beforeAll(async () => {
    redis = await startRedis(process.env.TEST_REDIS_URL);
    clients = [];
  });
  beforeEach(() => {
    const prefix = `platform-test-${randomBytes(6).toString('hex')}`;
    store = (windowMs = 60_000) => {
      const client = new Redis(redis.url, { lazyConnect: false, maxRetriesPerRequest: 1 });
      clients.push(client);
      return new RedisSlidingWindowStore(client, prefix, windowMs);
    };
  });
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.quit()));
    redis.stop();
  });

  it('charges all of a cost in one step or none of it, and a refusal records nothing', async () => {
    const sut = store();
    await expect(sut.increment('k', 60_000, 5, 0, 'default', 3)).resolves.toMatchObject({
      isBlocked: false,
      totalHits: 3,
      remaining: 2,
      cost: 3,
    });
    await expect(sut.increment('k', 60_000, 5, 0, 'default', 3)).resolves.toMatchObject({
      isBlocked: true,
      totalHits: 6,
      remaining: 2,
      cost: 3,
    });
    await expect(sut.increment('k', 60_000, 5, 0, 'default', 2)).resolves.toMatchObject({
      isBlocked: false,
      remaining: 0,
    });
    await expect(sut.increment('k', 60_000, 5, 0, 'default')).resolves.toMatchObject({
      isBlocked: true,
      remaining: 0,
      cost: 1,
    });
  });

  it('refuses a cost until enough accepts have left the window, and says when, by its clock', async () => {
    const WINDOW = 3_000;
    const sut = store(WINDOW);
    // One unit at t0, a second later 3 units, then a read: 5 of 5. Three more units need the three
    // oldest gone, the last of them one of the 3 units at t1 (not the t0 unit, nor the read).
    const t0 = Date.now();
    await sut.increment('k', WINDOW, 5, 0, 'default');
    await sleep(1_000);
    const before = Date.now();
    const accepted = await sut.increment('k', WINDOW, 5, 0, 'default', 3);
    const after = Date.now();
    expect(accepted).toMatchObject({ isBlocked: false, remaining: 1 });
    // Accepted: the reset is when the oldest unit (t0) leaves.
    expect(accepted.resetAtMs).toBeLessThan(before + WINDOW - 500);
    expect(accepted.resetAtMs).toBeGreaterThanOrEqual(t0 + WINDOW - 5);
    await sleep(500);
    await sut.increment('k', WINDOW, 5, 0, 'default');
    const asked = Date.now();
    const refused = await sut.increment('k', WINDOW, 5, 0, 'default', 3);
    const answered = Date.now();
    expect(refused).toMatchObject({ isBlocked: true, remaining: 0, cost: 3 });
    // Redis's TIME and Date.now() read the same clock; a millisecond either way for rounding.
    expect(refused.resetAtMs).toBeGreaterThanOrEqual(before + WINDOW - 1);
    expect(refused.resetAtMs).toBeLessThanOrEqual(after + WINDOW + 1);
    expect(refused.timeToBlockExpire).toBeGreaterThanOrEqual(
      Math.ceil((refused.resetAtMs - answered) / 1000),
    );
    expect(refused.timeToBlockExpire).toBeLessThanOrEqual(
      Math.ceil((refused.resetAtMs - asked) / 1000),
    );

    // Then it fits, the read still counting.
    await sleep(Math.max(0, refused.resetAtMs - Date.now() + 20));
    await expect(sut.increment('k', WINDOW, 5, 0, 'default', 3)).resolves.toMatchObject({
      isBlocked: false,
      remaining: 1,
    });
  });

  it('charges a cost above the limit as the whole limit, so it is never locked out', async () => {
    const WINDOW = 1_500;
    const sut = store(WINDOW);
    await expect(sut.increment('k', WINDOW, 4, 0, 'default', 20)).resolves.toMatchObject({
      isBlocked: false,
      totalHits: 4,
      remaining: 0,
      cost: 4,
    });
    const refused = await sut.increment('k', WINDOW, 4, 0, 'default', 20);
    expect(refused).toMatchObject({ isBlocked: true, remaining: 0, cost: 4 });
    await sleep(Math.max(0, refused.resetAtMs - Date.now() + 20));
    await expect(sut.increment('k', WINDOW, 4, 0, 'default', 20)).resolves.toMatchObject({
      isBlocked: false,
      remaining: 0,
      cost: 4,
    });
  });

  it('never lets instances racing on one budget accept more units than the limit', async () => {
    // Two instances (two connections) send 60 requests of 3 units at once against 100.
    const instances = [store(), store()];
    const records = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        instances[i % 2]!.increment('org', 60_000, 100, 0, 'default', 3),
      ),
    );
    expect(records.filter((r) => !r.isBlocked)).toHaveLength(33);
    // 99 units spent: one more fits, and then nothing.
    await expect(instances[0]!.increment('org', 60_000, 100, 0, 'default')).resolves.toMatchObject({
      isBlocked: false,
      remaining: 0,
    });
    await expect(instances[1]!.increment('org', 60_000, 100, 0, 'default')).resolves.toMatchObject({
      isBlocked: true,
    });
  });
});
