import { Logger } from '@nestjs/common';
import { type Job, Queue, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { createRedis, untilReady } from '../redis/redis-client';
import { type Admitted, fairShares } from './delivery-admission';
import { deliveryPolicy } from './delivery-store';
import type { ClaimedMessage } from './delivery-types';
import { Batcher } from './batcher';
import { type DispatcherParts, WebhookDispatcher } from './webhook-dispatcher';
import { DeliverySemaphores } from './queued-statements';
import { within } from './work-trigger';

const QUEUE = 'webhook-deliveries';
/**
 * Most messages one job carries. A relay step queues what it leased in jobs of at most this many
 * (so several instances' workers share a large step), each costing BullMQ's per-job scripts once.
 */
const BATCH = 32;

/**
 * How long a slot or mark lives without renewal. Holders renew theirs every quarter of it while
 * their work runs, so the slots of an instance that died are free within this time and the
 * endpoint's other deliveries go on (a hold as long as an attempt stalled them for it).
 */
const SLOT_HOLD_MS = 2000;

/** A message whose slots (and, once a job here took it, its mark) this instance renews. */
interface Hold {
  organizationId: string;
  endpointId: string;
  /** The job here that marked it; absent while it waits in the queue. */
  jobId?: string;
  /** The job the relay here queued it as, once the queue has answered. */
  queuedAs?: string;
  since: number;
}

/** A queued message, whose slots it holds, and how many attempts it had when leased. */
interface QueuedMessage {
  id: string;
  /** Absent on jobs queued before per-organization limits (those hold no slots). */
  organizationId?: string;
  endpointId?: string;
  /** Absent on jobs queued before batches: the message is then attempted if still pending. */
  attempts?: number;
}

/** A queued job: the messages of one relay step (at most BATCH); before batches, one message. */
type DeliveryJob = { messages: QueuedMessage[] } | QueuedMessage;

/** A message a worker is done with, whose slots are to be freed. */
interface Finished {
  message: QueuedMessage;
  jobId: string;
}

/**
 * The scale-out webhook dispatcher (REDIS_URL set): BullMQ carries due deliveries between
 * instances, and every instance runs both halves.
 *
 * - The relay is the embedded dispatcher's loop without the sending: one transaction fans new
 *   outbox events out into messages and leases the due ones (`FOR UPDATE SKIP LOCKED`, so two
 *   relays never take the same row), then hands them to the queue, up to BATCH messages per job
 *   (one job per message cost BullMQ's scripts, a PostgreSQL read and two semaphore calls for
 *   each delivery). A relay that dies after leasing leaves the leases to run out and the next
 *   relay queues those messages again.
 * - Workers take jobs, read the job's messages in one query, attempt them all at once and record
 *   each result in PostgreSQL (the `AttemptRecorder` writes attempts finishing together in one
 *   transaction), where the API reads it and where the next retry is scheduled (the relay queues
 *   it again when it falls due). Each message frees its slots when its request ends (the limits
 *   bound requests in flight to receivers) and drops its mark once its attempt is written; the
 *   job completes when all of them are written, so the attempts a worker has sent but not yet
 *   written are bounded by its jobs. A job whose worker died is run again by another worker
 *   (BullMQ's stalled-job check): what its messages' attempts wrote is skipped, the rest is sent
 *   under the same message ids.
 * - A message is sent by one job at a time: a worker marks each message it takes as its job's in
 *   Redis, and a second job carrying it (queued again after its lease ran out while the first
 *   waited) leaves it alone while the mark lives. A job run after its message's attempt was
 *   written (the attempt count moved on) skips it.
 * - Concurrency holds across instances: Redis semaphores bound all deliveries together, each
 *   organization and each endpoint, and the relay queues a message only once it holds all three
 *   slots, so the queue only ever holds work that may run now.
 * - Fairness: a tenant at its limit is left out of the relay's next read, so its backlog stays in
 *   the database, never in front of another tenant's delivery in the queue, and its slow
 *   attempts hold at most its own slots (the other messages of a job are sent, written and free
 *   their slots without waiting for them).
 */
export class QueuedWebhookDispatcher extends WebhookDispatcher {
  private readonly logger = new Logger('Webhooks');
  private readonly holdMs = SLOT_HOLD_MS;
  /** BullMQ's job lock: a job lasts an attempt's timeout and its write. */
  private readonly jobLockMs: number;
  /** Messages whose holds this instance renews, by id (see RENEW). */
  private readonly holds = new Map<string, Hold>();
  private renewTimer: NodeJS.Timeout | undefined;
  private semaphores: DeliverySemaphores | undefined;
  private queue: Queue | undefined;
  private worker: Worker | undefined;
  private commands: Redis | undefined;
  private running = false;
  private rerun = false;
  /** Who the last relay step found at their limit. */
  private full = { organizations: [] as string[], endpoints: [] as string[] };
  /** The last relay step left due messages behind for want of slots: a freed slot wakes it. */
  private starved = false;
  /** This relay step's soonest lapse of a hold in a semaphore it found full (ms from now). */
  private lapseMs: number | undefined;
  /** A slot was freed while a relay step ran: a step that ends starved runs again at once. */
  private freedMeanwhile = false;
  /** The relay step under way found every global slot taken. */
  private globalFull = false;
  /** Frees the slots of messages whose request ended, those ending together in one call. */
  private readonly frees = new Batcher<Finished>((ended) => this.release(ended, false));
  /** Drops written messages' marks (and slots), those written together in one script call. */
  private readonly releases = new Batcher<Finished>((finished) => this.release(finished, true));
  /**
   * What this instance's relay leased and queued, by id, until a worker here takes it: a job it
   * relayed and picks up itself within the lease need not read it again (others read theirs).
   */
  private readonly leased = new Map<string, { message: ClaimedMessage; at: number }>();
  private readonly leaseMs: number;

  constructor(
    parts: DispatcherParts,
    private readonly redis: { url: string; prefix: string },
  ) {
    super(parts);
    this.jobLockMs = parts.config.timeoutMs + 5000;
    this.leaseMs = deliveryPolicy(parts.config).leaseMs;
  }

  async onApplicationBootstrap(): Promise<void> {
    if (!this.config.dispatcher) return;
    this.commands = createRedis(this.redis.url, this.logger, 'platform-webhooks');
    this.semaphores = new DeliverySemaphores(
      this.commands,
      this.redis.prefix,
      this.config,
      this.holdMs,
    );
    await untilReady(this.commands, 5000);

    // BullMQ's own connections must wait out Redis outages rather than fail their commands.
    const bullConnection = { url: this.redis.url, maxRetriesPerRequest: null };
    this.queue = new Queue(QUEUE, { connection: bullConnection, prefix: this.redis.prefix });
    this.queue.on('error', (error) => this.logger.error(`Webhook queue: ${error.message}`));
    // Every queued message holds a global slot, so jobs never outnumber WEBHOOK_CONCURRENCY; the
    // queue's own bound stays as a backstop (and covers jobs queued before the global slots).
    await this.queue
      .setGlobalConcurrency(this.config.concurrency)
      .catch((error: Error) => this.logger.error(`Webhook queue: ${error.message}`));
    this.worker = new Worker<DeliveryJob>(QUEUE, (job) => this.process(job), {
      connection: bullConnection,
      prefix: this.redis.prefix,
      concurrency: this.config.concurrency,
      // A job runs its messages' attempts at once (one timeout) and their writes; past that its
      // worker is gone.
      lockDuration: this.jobLockMs,
      stalledInterval: this.jobLockMs,
      removeOnComplete: { count: 0 },
      removeOnFail: { count: 0 },
    });
    this.worker.on('error', (error) => this.logger.error(`Webhook worker: ${error.message}`));
    this.renewTimer = setInterval(() => void this.renew(), this.holdMs / 4);
    this.renewTimer.unref();

    this.startLooking();
  }

  /** Renews the holds of what this instance admitted or took, in one script call. */
  private async renew(): Promise<void> {
    if (this.holds.size === 0 || !this.semaphores) return;
    const now = this.clock.nowMs();
    const renewing: [string, Hold][] = [];
    for (const [id, hold] of this.holds) {
      // Queued here and never seen taken (or taken and done between renewals): lease over, done.
      if (!hold.jobId && now - hold.since >= this.leaseMs) this.holds.delete(id);
      else renewing.push([id, hold]);
    }
    if (renewing.length === 0) return;
    try {
      const codes = await this.semaphores.renew(renewing.map(([id, hold]) => ({ id, ...hold })));
      // Queued here and taken by a job since: the job renews it (a dead worker's holds lapse).
      renewing.forEach(([id, hold], i) => {
        if (codes[i] === 0 && this.holds.get(id) === hold) this.holds.delete(id);
      });
    } catch (error) {
      // Holds lapse and are taken again within the limits (TAKE); nothing is sent twice.
      this.logger.warn(`Could not renew webhook delivery slots: ${(error as Error).message}`);
    }
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
    clearInterval(this.renewTimer);
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

  /** Fan out, lease what is due and may go now, queue it; again while there is more. */
  private async relay(): Promise<void> {
    try {
      do {
        this.rerun = false;
        this.freedMeanwhile = false;
        const { full: stillFull } = await this.room(this.full);
        // Set by the admission if it finds every global slot taken.
        this.globalFull = false;
        const { fannedOut, claimed, more, full } = await this.transactions.run(async (manager) => {
          const now = this.clock.now();
          const fannedOut = await this.store.fanOut(manager, now);
          const claim = await this.store.claim(manager, now, {
            // Every message queued holds a global slot, so a step leases no more than the
            // admission finds free then. Not the room counted at the step's start: the fan-out
            // and the read take longer than a POST, so the slots held then are mostly free by
            // the time it admits (limited by that count, or skipped when it was 0, a step
            // took every slot and the next one none, leaving half of them idle).
            limit: this.config.concurrency,
            fullOrganizations: stillFull.organizations,
            fullEndpoints: stillFull.endpoints,
            admit: (candidates, max) => this.admit(candidates, max),
          });
          return { fannedOut, ...claim };
        });
        this.full = full;
        // Someone found full had due messages left behind: the read after it left them out, so
        // its `more` does not count them (the relay then waited for the poll, ~0.8 s pauses
        // with messages due in an instrumented run).
        this.starved =
          this.globalFull ||
          full.organizations.length + full.endpoints.length > 0 ||
          (more && claimed.length > 0);
        if (claimed.length > 0) await this.enqueue(claimed);
        // A full claim may have left due messages; if every slot was taken, a finished
        // attempt kicks the relay again.
        if (fannedOut > 0 || (more && claimed.length > 0 && !this.globalFull)) this.rerun = true;
        // Else it waited for the poll (instrumented: pauses of ~0.8 s with messages due).
        if (this.starved && this.freedMeanwhile) this.rerun = true;
        // Slots held by an instance that died are never freed, only lapse: look again then
        // (else the relay waited for the poll, up to a second more, after the holds ran out).
        const lapseMs = this.lapseMs;
        this.lapseMs = undefined;
        if (this.starved && lapseMs !== undefined)
          this.trigger.at(this.clock.nowMs() + lapseMs + 1);
      } while (this.rerun && this.trigger.active);
    } catch (error) {
      // Leased messages not queued become due again when their lease runs out.
      this.logger.error(`Webhook relay step failed: ${(error as Error).message}`);
      this.lapseMs = undefined;
      this.trigger.at(this.clock.nowMs() + 1000);
    } finally {
      this.running = false;
    }
  }

  /** Queues leased messages, at most BATCH to a job, spread evenly over the jobs. */
  private async enqueue(claimed: ClaimedMessage[]): Promise<void> {
    const at = this.clock.nowMs();
    // Entries a worker here never took (another instance's worker did) are dropped once stale.
    if (this.leased.size >= 4 * this.config.concurrency) {
      for (const [id, entry] of this.leased) {
        if (at - entry.at >= this.leaseMs) this.leased.delete(id);
      }
    }
    for (const message of claimed) this.leased.set(message.id, { message, at });
    const size = Math.ceil(claimed.length / Math.ceil(claimed.length / BATCH));
    const bulk: { name: string; data: { messages: QueuedMessage[] } }[] = [];
    for (let i = 0; i < claimed.length; i += size) {
      const messages: QueuedMessage[] = claimed.slice(i, i + size).map((message) => ({
        id: message.id,
        organizationId: message.organizationId,
        endpointId: message.endpointId,
        attempts: message.attemptCount,
      }));
      bulk.push({ name: 'deliver', data: { messages } });
    }
    // Only the job a message was queued as ends the relay's renewals of it (see RENEW).
    (await this.queue!.addBulk(bulk)).forEach((job, i) => {
      for (const { id } of bulk[i]!.data.messages) {
        const hold = this.holds.get(id);
        if (hold) hold.queuedAs = job.id;
      }
    });
  }

  /** Takes the slots of the candidates that may go now, in Redis, for every instance at once. */
  private async admit(candidates: ClaimedMessage[], max: number): Promise<Admitted> {
    const decision: Admitted = { admitted: [], fullOrganizations: [], fullEndpoints: [] };
    if (candidates.length === 0 || max <= 0) return decision;
    // Contenders are this read's: which endpoints hold slots on other instances is not known here.
    const shares = fairShares(
      candidates,
      () => this.config.organizationConcurrency,
      (id) => this.attempter.pacing.limit(id, this.config.endpointConcurrency),
    );
    const { codes, lapseMs } = await this.semaphores!.admit(
      candidates,
      max,
      candidates.map((m) => shares.get(m.endpointId) ?? this.config.endpointConcurrency),
    );
    this.noteLapse(lapseMs);
    const since = this.clock.nowMs();
    candidates.forEach((message, i) => {
      if (codes[i] === 1) {
        decision.admitted.push(message);
        const { organizationId, endpointId } = message;
        this.holds.set(message.id, { organizationId, endpointId, since });
      } else if (codes[i] === 2) decision.fullOrganizations.push(message.organizationId);
      else if (codes[i] === 3) decision.fullEndpoints.push(message.endpointId);
      else if (codes[i] === 4) this.globalFull = true;
    });
    return decision;
  }

  private noteLapse(lapseMs: number | undefined): void {
    if (lapseMs !== undefined) this.lapseMs = Math.min(lapseMs, this.lapseMs ?? Infinity);
  }

  /**
   * Free global slots, and of the organizations and endpoints found full last time, those still
   * full: one script call before a relay step, if the last one found some full (otherwise the
   * admission alone finds out, and a steady trickle of events costs no extra round trip). The
   * relay uses only the second: the admission, later in the step, is what counts the free slots.
   */
  private async room(last: {
    organizations: string[];
    endpoints: string[];
  }): Promise<{ room: number; full: { organizations: string[]; endpoints: string[] } }> {
    if (last.organizations.length + last.endpoints.length === 0) {
      return { room: this.config.concurrency, full: last };
    }
    const room = await this.semaphores!.room(last.organizations, last.endpoints);
    this.noteLapse(room.lapseMs);
    const full = new Set(room.full.map((i) => i - 1));
    return {
      room: Math.min(room.free, this.config.concurrency),
      full: {
        organizations: last.organizations.filter((_, i) => full.has(i)),
        endpoints: last.endpoints.filter((_, i) => full.has(last.organizations.length + i)),
      },
    };
  }

  /**
   * One job: its messages read in one query, taken, attempted at once; each frees its slots when
   * its request ends, is written, then drops its mark. The job completes once every attempt is
   * written (a crash before that runs the job again elsewhere, and only its unwritten messages
   * are sent).
   */
  private async process(job: Job<DeliveryJob>): Promise<void> {
    const queued = 'messages' in job.data ? job.data.messages : [job.data];
    const jobId = job.id!;
    const done = (messages: readonly QueuedMessage[]) =>
      this.finish(messages.map((message) => ({ message, jobId })));
    let messages: ClaimedMessage[];
    let taken: ClaimedMessage[];
    try {
      messages = await this.read(queued);
      taken = await this.take(jobId, messages, queued);
    } catch (error) {
      // Not attempted: the slots go back now, the leases run out and the relay queues them again.
      await done(queued);
      throw error;
    }
    const byId = new Map(queued.map((q) => [q.id, q]));
    // Those with nothing to do (sent, deleted, disabled meanwhile) free their slots at once;
    // those another job took keep theirs for it.
    const loaded = new Set(messages.map((m) => m.id));
    await Promise.all([
      done(queued.filter((q) => !loaded.has(q.id))),
      ...taken.map(async (message) => {
        const mine = byId.get(message.id)!;
        let freed: Promise<void> | undefined;
        try {
          const attempt = await this.attempter.attempt(message).finally(() => {
            freed = this.finish([{ message: mine, jobId }], this.frees);
          });
          // The request is over, so its slots are free (they bound requests in flight, and the
          // write took most of a slot's time); the job completes, and the mark that keeps a
          // second job from sending the message goes, only once the attempt is written.
          await this.recorder.record(attempt);
        } catch (error) {
          // The lease runs out and the message is attempted again.
          this.logger.error(`Could not record a webhook attempt: ${(error as Error).message}`);
        } finally {
          await freed;
          await done([mine]);
        }
      }),
    ]);
  }

  /**
   * The job's messages still to be sent. Those this instance leased, within their lease, as the
   * relay read them: leased, they cannot have been attempted since (the mark keeps out a second
   * job). The others (another instance's, or a job run again) are read in one query, and only
   * those still pending and not attempted since they were queued are returned.
   */
  private async read(queued: QueuedMessage[]): Promise<ClaimedMessage[]> {
    const now = this.clock.nowMs();
    const messages: ClaimedMessage[] = [];
    const unknown: QueuedMessage[] = [];
    for (const q of queued) {
      const entry = this.leased.get(q.id);
      this.leased.delete(q.id);
      if (entry && now - entry.at < this.leaseMs) messages.push(entry.message);
      else unknown.push(q);
    }
    if (unknown.length > 0) {
      messages.push(...(await this.store.load(this.transactions.manager, unknown)));
    }
    return messages;
  }

  /** Marks the loaded messages as this job's and renews their holds; returns those it took. */
  private async take(
    jobId: string,
    messages: ClaimedMessage[],
    queued: QueuedMessage[],
  ): Promise<ClaimedMessage[]> {
    // Messages of jobs queued before per-organization limits hold no slots and are not marked.
    const holding = new Set(
      queued.filter((q) => q.organizationId && q.endpointId).map((q) => q.id),
    );
    const marked = messages.filter((m) => holding.has(m.id));
    if (marked.length === 0) return messages;
    const codes = await this.semaphores!.take(jobId, marked);
    const refused = new Set(marked.filter((_, i) => codes[i] !== 1).map((m) => m.id));
    const since = this.clock.nowMs();
    for (const m of marked) {
      if (refused.has(m.id)) continue;
      const { organizationId, endpointId } = m;
      this.holds.set(m.id, { organizationId, endpointId, jobId, since });
    }
    return messages.filter((m) => !refused.has(m.id));
  }

  /**
   * Frees the slots of messages a job is done with (together with other jobs'), and their marks
   * unless `through` is `frees` (the request ended, the attempt is not written yet).
   */
  private async finish(
    finished: Finished[],
    through: Batcher<Finished> = this.releases,
  ): Promise<void> {
    if (finished.length === 0) return;
    await Promise.all(
      finished
        .filter(({ message }) => message.organizationId && message.endpointId)
        .map((f) => through.add(f).catch(() => undefined)),
    );
    // A slot is free: if the relay left messages behind for want of slots, it may queue them.
    this.freedMeanwhile = true;
    if (this.starved) this.wake();
  }

  private async release(finished: Finished[], marks: boolean): Promise<void> {
    // Freed slots are not renewed (RENEW finds them gone); the mark is, until it is dropped.
    if (marks) for (const { message } of finished) this.holds.delete(message.id);
    await this.semaphores!.release(
      finished.map(({ message, jobId }) => ({
        id: message.id,
        organizationId: message.organizationId!,
        endpointId: message.endpointId!,
        jobId,
      })),
      marks,
    );
  }
}
