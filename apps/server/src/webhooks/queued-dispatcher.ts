import { Logger } from '@nestjs/common';
import { type Job, Queue, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { createRedis, untilReady } from '../redis/redis-client';
import type { Admitted, ClaimedMessage } from './delivery-store';
import { type DispatcherParts, WebhookDispatcher } from './webhook-dispatcher';
import { within } from './work-trigger';

const QUEUE = 'webhook-deliveries';

/**
 * Redis semaphores per organization and per endpoint, shared by every instance: each holder (a
 * message id) in a sorted set scored by when its hold expires, so a holder that died frees its
 * slot when the hold runs out. The relay takes both slots for a message before queueing it, so
 * the queue only ever holds deliveries that may run now.
 *
 * KEYS: each candidate's organization and endpoint semaphores, in pairs, oldest candidate first.
 * ARGV: organization limit, endpoint limit, hold (ms), most to admit, then the message ids.
 * Returns a code per candidate: 1 admitted, 2 organization full, 3 endpoint full, 0 not looked at.
 * A message that already holds its slots (queued again after its lease ran out) renews them.
 */
const ADMIT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local organizationLimit, endpointLimit = tonumber(ARGV[1]), tonumber(ARGV[2])
local hold, most = tonumber(ARGV[3]), tonumber(ARGV[4])
local pruned, codes, admitted = {}, {}, 0
for i = 1, #KEYS / 2 do
  local organization, endpoint, id = KEYS[2 * i - 1], KEYS[2 * i], ARGV[4 + i]
  local code = 0
  if admitted < most then
    for _, key in ipairs({ organization, endpoint }) do
      if not pruned[key] then
        redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
        pruned[key] = true
      end
    end
    code = 1
    if not redis.call('ZSCORE', endpoint, id) then
      if redis.call('ZCARD', organization) >= organizationLimit then
        code = 2
      elseif redis.call('ZCARD', endpoint) >= endpointLimit then
        code = 3
      end
    end
    if code == 1 then
      for _, key in ipairs({ organization, endpoint }) do
        redis.call('ZADD', key, now + hold, id)
        redis.call('PEXPIRE', key, hold)
      end
      admitted = admitted + 1
    end
  end
  codes[i] = code
end
return codes
`;

/** A worker renews its message's hold when the attempt starts: the attempt gets the whole hold. */
const RENEW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
for i = 1, #KEYS do
  redis.call('ZADD', KEYS[i], now + tonumber(ARGV[2]), ARGV[1])
  redis.call('PEXPIRE', KEYS[i], tonumber(ARGV[2]))
end
return 1
`;

/**
 * Which of KEYS (semaphores; ARGV: the limit of each) are still full. The relay asks this of
 * the organizations and endpoints it found full last time, to leave them out of its first read.
 */
const STILL_FULL = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local full = {}
for i = 1, #KEYS do
  redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', now)
  if redis.call('ZCARD', KEYS[i]) >= tonumber(ARGV[i]) then full[#full + 1] = i end
end
return full
`;

interface SemaphoreCommands {
  platformStillFull(...keysThenArgs: (string | number)[]): Promise<number[]>;
  platformAdmit(...keysThenArgs: (string | number)[]): Promise<number[]>;
  platformRenew(
    organizationKey: string,
    endpointKey: string,
    holder: string,
    holdMs: number,
  ): Promise<number>;
}

/** A queued delivery: the message, and whose slots it holds. */
interface DeliveryJob {
  id: string;
  /** Absent on jobs queued before per-organization limits (those hold no slots). */
  organizationId?: string;
  endpointId?: string;
}

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
 *   together, and Redis semaphores bound each organization and each endpoint.
 * - Fairness: the relay queues a message only once it holds a slot of its organization and of
 *   its endpoint (the worker frees them when the attempt is written). A tenant at its limit is
 *   left out of the relay's next read, so its backlog stays in the database, never in front of
 *   another tenant's delivery in the queue, and its slow attempts hold at most its own slots.
 */
export class QueuedWebhookDispatcher extends WebhookDispatcher {
  private readonly logger = new Logger('Webhooks');
  private readonly holdMs: number;
  private semaphores: SemaphoreCommands | undefined;
  private queue: Queue | undefined;
  private worker: Worker | undefined;
  private commands: Redis | undefined;
  private running = false;
  private rerun = false;
  /** Who the last relay step found at their limit. */
  private full: { organizations: string[]; endpoints: string[] } = {
    organizations: [],
    endpoints: [],
  };

  constructor(
    parts: DispatcherParts,
    private readonly redis: { url: string; prefix: string },
  ) {
    super(parts);
    this.holdMs = parts.config.timeoutMs + 5000;
  }

  async onApplicationBootstrap(): Promise<void> {
    if (!this.config.dispatcher) return;
    this.commands = createRedis(this.redis.url, this.logger, 'platform-webhooks');
    // The admission's key count varies with the candidates: it is passed first on each call.
    this.commands.defineCommand('platformAdmit', { lua: ADMIT });
    this.commands.defineCommand('platformRenew', { numberOfKeys: 2, lua: RENEW });
    this.commands.defineCommand('platformStillFull', { lua: STILL_FULL });
    this.semaphores = this.commands as unknown as SemaphoreCommands;
    await untilReady(this.commands, 5000);

    // BullMQ's own connections must wait out Redis outages rather than fail their commands.
    const bullConnection = { url: this.redis.url, maxRetriesPerRequest: null };
    this.queue = new Queue(QUEUE, { connection: bullConnection, prefix: this.redis.prefix });
    this.queue.on('error', (error) => this.logger.error(`Webhook queue: ${error.message}`));
    await this.queue
      .setGlobalConcurrency(this.config.concurrency)
      .catch((error: Error) => this.logger.error(`Webhook queue: ${error.message}`));
    this.worker = new Worker<DeliveryJob>(QUEUE, (job) => this.process(job), {
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

    this.startLooking();
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
    await this.recorder.close();
    this.attempter.close();
    this.commands?.disconnect();
  }

  /** Asks for a relay step soon; asks while one runs coalesce into one more. */
  wake(): void {
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
        const stillFull = await this.stillFull(this.full);
        const { fannedOut, claimed, more, full } = await this.transactions.run(async (manager) => {
          const now = this.clock.now();
          const fannedOut = await this.store.fanOut(manager, now);
          const claim = await this.store.claim(manager, now, {
            // Every job queued holds slots, so a step need not queue more than can run at once
            // (and reads only twice that many rows).
            limit: this.config.concurrency,
            fullOrganizations: stillFull.organizations,
            fullEndpoints: stillFull.endpoints,
            admit: (candidates, max) => this.admit(candidates, max),
          });
          return { fannedOut, ...claim };
        });
        this.full = full;
        if (claimed.length > 0) {
          await this.queue!.addBulk(
            claimed.map((message) => {
              const data: DeliveryJob = {
                id: message.id,
                organizationId: message.organizationId,
                endpointId: message.endpointId,
              };
              return { name: 'deliver', data, opts: { jobId: message.id } };
            }),
          );
        }
        // A full claim may have left due messages; if every slot was taken, a finished
        // attempt kicks the relay again.
        if (fannedOut > 0 || (more && claimed.length > 0)) this.rerun = true;
      } while (this.rerun && this.trigger.active);
    } catch (error) {
      // Leased messages not queued become due again when their lease runs out.
      this.logger.error(`Webhook relay step failed: ${(error as Error).message}`);
      this.trigger.at(this.clock.nowMs() + 1000);
    } finally {
      this.running = false;
    }
  }

  /** Takes the slots of the candidates that may go now, in Redis, for every instance at once. */
  private async admit(candidates: ClaimedMessage[], max: number): Promise<Admitted> {
    const decision: Admitted = { admitted: [], fullOrganizations: [], fullEndpoints: [] };
    if (candidates.length === 0 || max <= 0) return decision;
    const keys = candidates.flatMap((m) => this.keys(m.organizationId, m.endpointId));
    const codes = await this.semaphores!.platformAdmit(
      keys.length,
      ...keys,
      this.config.organizationConcurrency,
      this.config.endpointConcurrency,
      this.holdMs,
      max,
      ...candidates.map((m) => m.id),
    );
    candidates.forEach((message, i) => {
      if (codes[i] === 1) decision.admitted.push(message);
      else if (codes[i] === 2) decision.fullOrganizations.push(message.organizationId);
      else if (codes[i] === 3) decision.fullEndpoints.push(message.endpointId);
    });
    return decision;
  }

  /** Of the organizations and endpoints found full last time, those still full. */
  private async stillFull(last: { organizations: string[]; endpoints: string[] }) {
    const keys = [
      ...last.organizations.map((id) => `${this.redis.prefix}:webhook-organization:${id}`),
      ...last.endpoints.map((id) => `${this.redis.prefix}:webhook-endpoint:${id}`),
    ];
    if (keys.length === 0) return last;
    const limits = [
      ...last.organizations.map(() => this.config.organizationConcurrency),
      ...last.endpoints.map(() => this.config.endpointConcurrency),
    ];
    const full = new Set(
      (await this.semaphores!.platformStillFull(keys.length, ...keys, ...limits)).map((i) => i - 1),
    );
    return {
      organizations: last.organizations.filter((_, i) => full.has(i)),
      endpoints: last.endpoints.filter((_, i) => full.has(last.organizations.length + i)),
    };
  }

  private keys(organizationId: string, endpointId: string): [string, string] {
    return [
      `${this.redis.prefix}:webhook-organization:${organizationId}`,
      `${this.redis.prefix}:webhook-endpoint:${endpointId}`,
    ];
  }

  private async process(job: Job<DeliveryJob>): Promise<void> {
    const { id, organizationId, endpointId } = job.data;
    const keys = organizationId && endpointId ? this.keys(organizationId, endpointId) : undefined;
    try {
      const message = await this.store.load(this.transactions.manager, id);
      if (!message) return;
      if (keys) await this.semaphores!.platformRenew(...keys, id, this.holdMs);
      // The job completes only once its attempt is written (a crash before that redelivers).
      await this.recorder.record(await this.attempter.attempt(message));
    } finally {
      if (keys) {
        await this.commands!.multi()
          .zrem(keys[0], id)
          .zrem(keys[1], id)
          .exec()
          .catch(() => undefined);
      }
      // A slot is free: if the relay left messages behind for want of slots, it may queue them.
      if (this.full.organizations.length + this.full.endpoints.length > 0) this.wake();
    }
  }
}
