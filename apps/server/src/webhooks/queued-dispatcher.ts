import { randomUUID } from 'node:crypto';
import {
  type BeforeApplicationShutdown,
  Logger,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { DelayedError, type Job, Queue, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import type { WebhookConfig } from '../config/env';
import type { TransactionRunner } from '../common/transactions';
import { createRedis, untilReady } from '../redis/redis.module';
import { deliveryPolicy, logDisabled, WebhookAttempter } from './attempter';
import { Batcher } from './batcher';
import { type CompletedAttempt, DeliveryStore } from './delivery-store';
import { WorkTrigger, within } from './work-trigger';
import type { SecretBox } from './secret-box';
import type { Metrics } from '../metrics/metrics';

const QUEUE = 'webhook-deliveries';
/** How many due messages one relay step hands to the queue. */
const RELAY_BATCH = 500;
/** When an endpoint is at its limit, the job waits this long (plus jitter) before trying again. */
const ENDPOINT_BUSY_DELAY_MS = 100;

/**
 * A Redis semaphore per endpoint, shared by every instance: holders in a sorted set scored by
 * when their hold expires, so a holder that died frees its slot when the hold runs out.
 */
const ACQUIRE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[2])
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]))
  return 1
end
return 0
`;

type AcquireCommand = (
  key: string,
  limit: number,
  holder: string,
  holdMs: number,
) => Promise<number>;

/**
 * The scale-out webhook dispatcher (REDIS_URL set): BullMQ carries due deliveries between
 * instances, and every instance runs both halves.
 *
 * - The relay is the embedded dispatcher's loop without the sending: one transaction fans new
 *   outbox events out into messages and leases the due ones (`FOR UPDATE SKIP LOCKED`, so two
 *   relays never take the same row), then hands each to the queue with job id = message id.
 *   BullMQ ignores an add whose job id exists, so a message is queued once however many relays
 *   see it; a relay that dies after leasing leaves the lease to run out and the next relay
 *   queues it.
 * - Workers take jobs, attempt the delivery and record the result in PostgreSQL, where the API
 *   reads it and where the next retry is scheduled (the relay queues it again when it falls due).
 *   Concurrency holds across instances: the queue's global concurrency bounds all workers
 *   together, and a Redis semaphore bounds each endpoint.
 */
export class QueuedWebhookDispatcher implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('Webhooks');
  private readonly store: DeliveryStore;
  private readonly attempter: WebhookAttempter;
  private readonly holdMs: number;
  /**
   * Attempts finishing together are written in one transaction: a worker runs dozens of jobs at
   * once, and one transaction per attempt made PostgreSQL the bottleneck.
   */
  private readonly recorder = new Batcher<CompletedAttempt>(async (completed) => {
    const recorded = await this.transactions.run(
      (manager) => this.store.record(manager, completed, new Date()),
      { notify: false },
    );
    logDisabled(this.logger, recorded.disabled);
    if (recorded.nextRetryAt) this.trigger.at(recorded.nextRetryAt.getTime());
  });
  private queue: Queue | undefined;
  private worker: Worker | undefined;
  private commands: Redis | undefined;
  private acquire: AcquireCommand | undefined;
  private running = false;
  private rerun = false;
  private readonly trigger = new WorkTrigger(() => this.kick());

  constructor(
    private readonly config: WebhookConfig,
    private readonly redis: { url: string; prefix: string },
    private readonly transactions: TransactionRunner,
    secrets: SecretBox,
    metrics?: Metrics,
  ) {
    this.store = new DeliveryStore(transactions.dialect, deliveryPolicy(config));
    this.attempter = new WebhookAttempter(config, secrets, metrics);
    this.holdMs = config.timeoutMs + 5000;
  }

  async onApplicationBootstrap(): Promise<void> {
    if (!this.config.dispatcher) return;
    this.commands = createRedis(this.redis.url, this.logger, 'platform-webhooks');
    this.commands.defineCommand('platformAcquire', { numberOfKeys: 1, lua: ACQUIRE });
    const command = (this.commands as unknown as { platformAcquire: AcquireCommand })
      .platformAcquire;
    this.acquire = command.bind(this.commands);
    await untilReady(this.commands, 5000);

    // BullMQ's own connections must wait out Redis outages rather than fail their commands.
    const bullConnection = { url: this.redis.url, maxRetriesPerRequest: null };
    this.queue = new Queue(QUEUE, { connection: bullConnection, prefix: this.redis.prefix });
    this.queue.on('error', (error) => this.logger.error(`Webhook queue: ${error.message}`));
    await this.queue
      .setGlobalConcurrency(this.config.concurrency)
      .catch((error: Error) => this.logger.error(`Webhook queue: ${error.message}`));
    this.worker = new Worker<{ id: string }>(QUEUE, (job, token) => this.process(job, token), {
      connection: bullConnection,
      prefix: this.redis.prefix,
      concurrency: this.config.concurrency,
      // A job runs at most one attempt (timeout) and one write; past that its worker is gone.
      lockDuration: this.holdMs,
      stalledInterval: this.holdMs,
      removeOnComplete: { count: 0 },
      removeOnFail: { count: 0 },
    });
    this.worker.on('error', (error) => this.logger.error(`Webhook worker: ${error.message}`));

    this.trigger.start(this.transactions, this.config.pollIntervalMs);
  }

  /** Stops relaying, lets the worker finish its jobs (bounded), then closes the connections. */
  async beforeApplicationShutdown(): Promise<void> {
    if (!this.trigger.active) return;
    this.trigger.stop();
    // Bounded: with Redis unreachable, BullMQ's close would wait for it indefinitely.
    const outcome = await within(
      (async () => {
        await this.worker?.close();
        await this.queue?.close();
      })(),
      this.config.shutdownGraceMs,
    );
    if (outcome === 'timeout') {
      this.logger.warn(
        'Shutting down with webhook attempts still in flight or Redis unreachable; unfinished attempts will be retried',
      );
      await Promise.allSettled([this.worker?.disconnect(), this.queue?.disconnect()]);
    }
    this.attempter.close();
    this.commands?.disconnect();
  }

  kick(): void {
    if (!this.trigger.active) return;
    if (this.running) {
      this.rerun = true;
      return;
    }
    this.running = true;
    setImmediate(() => void this.relay());
  }

  /** Fan out, lease what is due, queue it; again while there is more. */
  private async relay(): Promise<void> {
    try {
      do {
        this.rerun = false;
        const { fannedOut, claimed } = await this.transactions.run(
          async (manager) => {
            const now = new Date();
            const fannedOut = await this.store.fanOut(manager, now);
            const claimed = await this.store.claim(
              manager,
              now,
              RELAY_BATCH,
              [],
              () => RELAY_BATCH,
            );
            return { fannedOut, claimed };
          },
          { notify: false },
        );
        if (claimed.length > 0) {
          await this.queue!.addBulk(
            claimed.map((message) => ({
              name: 'deliver',
              data: { id: message.id },
              opts: { jobId: message.id },
            })),
          );
        }
        if (fannedOut > 0 || claimed.length === RELAY_BATCH) this.rerun = true;
      } while (this.rerun && this.trigger.active);
    } catch (error) {
      // Leased messages not queued become due again when their lease runs out.
      this.logger.error(`Webhook relay step failed: ${(error as Error).message}`);
      this.trigger.at(Date.now() + 1000);
    } finally {
      this.running = false;
    }
  }

  private async process(job: Job<{ id: string }>, token?: string): Promise<void> {
    const message = await this.store.load(this.transactions.manager, job.data.id);
    if (!message) return;
    const key = `${this.redis.prefix}:webhook-endpoint:${message.endpointId}`;
    const holder = randomUUID();
    if (!(await this.acquire!(key, this.config.endpointConcurrency, holder, this.holdMs))) {
      // The endpoint has its share in flight (on some instance): wait a moment, same job.
      await job.moveToDelayed(Date.now() + ENDPOINT_BUSY_DELAY_MS * (1 + Math.random()), token);
      throw new DelayedError();
    }
    try {
      // The job completes only once its attempt is written (a crash before that redelivers).
      await this.recorder.add(await this.attempter.attempt(message));
    } finally {
      await this.commands!.zrem(key, holder).catch(() => undefined);
    }
  }
}
