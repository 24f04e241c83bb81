import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import type { WebhookConfig } from '../config/env';
import { startRedis } from '../testing/redis';
import { DeliverySemaphores, type SlotHolder } from './queued-statements';

/** Short holds, so a lapse is seen within the test; one slot per endpoint. */
const HOLD_MS = 300;
const limits = { concurrency: 10, organizationConcurrency: 10, endpointConcurrency: 1 };

describe(DeliverySemaphores.name, () => {
  let redis: Awaited<ReturnType<typeof startRedis>>;
  const clients: Redis[] = [];
  /** Two instances' views of one deployment's semaphores (each on its own connection). */
  let instances: () => [DeliverySemaphores, DeliverySemaphores];
  const message = (id: string): SlotHolder => ({ id, organizationId: 'org', endpointId: 'ep' });

  beforeAll(async () => {
    redis = await startRedis(process.env.TEST_REDIS_URL);
  });
  beforeEach(() => {
    const prefix = `platform-test-${randomBytes(6).toString('hex')}`;
    const one = () => {
      const client = new Redis(redis.url, { maxRetriesPerRequest: 1 });
      clients.push(client);
      return new DeliverySemaphores(client, prefix, limits as WebhookConfig, HOLD_MS);
    };
    instances = () => [one(), one()];
  });
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.quit()));
    redis.stop();
  });

  /**
   * Instance A's relay admits `first` (taking the endpoint's one slot) and queues it; instance
   * B's worker takes it as `job-b`. For three holds, A's relay renews what it queued, as it does
   * every quarter hold, and B's worker does so too unless it died. Then: may `second` go?
   */
  async function afterThreeHolds(workerAlive: boolean) {
    const [a, b] = instances();
    const first = message('first');
    expect((await a.admit([first], 1, [1])).codes).toEqual([1]);
    expect(await b.take('job-b', [first])).toEqual([1]);
    const relayCodes: number[] = [];
    for (let elapsed = 0; elapsed < 3 * HOLD_MS; elapsed += HOLD_MS / 4) {
      // The relay keeps renewing even after it was told the message is a job's: what it renews
      // must not bring a lapsed hold back either.
      relayCodes.push(...(await a.renew([{ ...first, queuedAs: 'job-b' }])));
      if (workerAlive) await b.renew([{ ...first, jobId: 'job-b' }]);
      await sleep(HOLD_MS / 4);
    }
    return { relayCodes, second: (await a.admit([message('second')], 1, [1])).codes[0] };
  }

  it("frees a slot its taker's worker died holding within a hold, though the instance that queued it lives", async () => {
    const { relayCodes, second } = await afterThreeHolds(false);
    // The relay learns the message is a job's and leaves its renewal to that job...
    expect(relayCodes[0]).toBe(0);
    // ...so the dead worker's slot lapsed, and the endpoint's next delivery may go.
    expect(second).toBe(1);
  });

  it('keeps the slot of a message whose taker is alive and renewing', async () => {
    const { second } = await afterThreeHolds(true);
    // Endpoint full (code 3): one slot, still the live job's.
    expect(second).toBe(3);
  });

  it("keeps renewing a message queued again while its earlier job's mark lives, until its new job takes it", async () => {
    const [a, b] = instances();
    const first = message('first');
    expect((await a.admit([first], 1, [1])).codes).toEqual([1]);
    // An earlier job marked it and its worker died; the lease ran out and the relay queued the
    // message again as job-2, which waits in the queue while job-1's mark still lives.
    expect(await b.take('job-1', [first])).toEqual([1]);
    const relayCodes: number[] = [];
    for (let elapsed = 0; elapsed < 2 * HOLD_MS; elapsed += HOLD_MS / 4) {
      relayCodes.push(...(await a.renew([{ ...first, queuedAs: 'job-2' }])));
      await sleep(HOLD_MS / 4);
    }
    // The relay went on renewing: the slot is still the message's, so job-2 takes it...
    expect(relayCodes.every((code) => code === 1)).toBe(true);
    expect((await a.admit([message('second')], 1, [1])).codes).toEqual([3]);
    expect(await b.take('job-2', [first])).toEqual([1]);
    // ...and from then on job-2 renews it, not the relay.
    expect(await a.renew([{ ...first, queuedAs: 'job-2' }])).toEqual([0]);
  });
});
