import { Logger } from '@nestjs/common';
import { admitWithin } from './delivery-admission';
import type { ClaimedMessage } from './delivery-types';
import { WebhookDispatcher } from './webhook-dispatcher';
import { within } from './work-trigger';

/**
 * The embedded webhook dispatcher: all delivery state lives in the database, and this loop moves
 * it forward. One "tick" is one transaction that fans new outbox events out into messages and
 * leases the next due messages; the POSTs then run outside any transaction, and each finished
 * attempt is written by the `AttemptRecorder` (as in the queued dispatcher) before its slot is
 * freed. A tick runs when an event commits (so it leaves within milliseconds), when an attempt
 * was recorded, when a delivery is retried or resumed, when a scheduled retry falls due, and on
 * a slow poll that catches work written by other processes.
 *
 * Concurrency is bounded in this process globally, per organization and per endpoint; an
 * organization or endpoint at its limit is skipped while claiming, so one tenant's slow endpoints
 * or backlog hold at most its own share of the slots and the others' due messages go out at once.
 * Within an organization, each endpoint that wants slots gets a fair share (`fairShares`), and
 * one that keeps timing out fewer (`EndpointPacing`).
 */
export class EmbeddedWebhookDispatcher extends WebhookDispatcher {
  private readonly logger = new Logger('Webhooks');

  private running = false;
  private rerun = false;
  private scheduled = false;
  private readonly inFlight = new Map<string, number>();
  private readonly inFlightByOrganization = new Map<string, number>();
  /** Attempts in flight by organization, then endpoint (an endpoint's fair share counts them). */
  private readonly endpointsInFlight = new Map<string, Map<string, number>>();
  private inFlightTotal = 0;
  private readonly sends = new Set<Promise<void>>();
  private idle: Promise<void> = Promise.resolve();

  onApplicationBootstrap(): void {
    if (this.config.dispatcher) this.startLooking();
  }

  /**
   * Graceful shutdown: stop taking work, let attempts in flight finish (bounded by
   * WEBHOOK_SHUTDOWN_GRACE) and write their results. Anything cut off keeps its lease and is
   * sent again by the next server to run.
   */
  async beforeApplicationShutdown(): Promise<void> {
    if (!this.trigger.active) return;
    this.trigger.stop();
    if ((await within(Promise.all(this.sends), this.config.shutdownGraceMs)) === 'timeout') {
      this.logger.warn(
        `Shutting down with ${this.inFlightTotal} webhook attempt(s) still in flight; they will be retried`,
      );
    }
    await this.idle;
    await this.recorder.close();
    this.attempter.close();
  }

  /** Asks for a tick soon; many asks while one runs coalesce into one more. */
  wake(): void {
    if (!this.trigger.active) return;
    if (this.running) {
      this.rerun = true;
      return;
    }
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.idle = this.tick();
    });
  }

  private async tick(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      do {
        this.rerun = false;
        await this.step();
      } while (this.rerun && this.trigger.active);
    } finally {
      this.running = false;
    }
  }

  /** One transaction: fan out, claim. Then start the claimed attempts. */
  private async step(): Promise<void> {
    const room = this.config.concurrency - this.inFlightTotal;
    const organizations = {
      held: (id: string) => this.inFlightByOrganization.get(id) ?? 0,
      limit: () => this.config.organizationConcurrency,
    };
    const endpoints = {
      held: (id: string) => this.inFlight.get(id) ?? 0,
      limit: (id: string) => this.attempter.pacing.limit(id, this.config.endpointConcurrency),
    };
    const full = (counts: Map<string, number>, slots: typeof endpoints) =>
      [...counts].filter(([id, n]) => n >= slots.limit(id)).map(([id]) => id);
    let claimed: ClaimedMessage[] = [];
    try {
      const outcome = await this.transactions.run(async (manager) => {
        const now = this.clock.now();
        const fannedOut = await this.store.fanOut(manager, now);
        const { claimed } =
          room > 0
            ? await this.store.claim(manager, now, {
                limit: room,
                fullOrganizations: full(this.inFlightByOrganization, organizations),
                fullEndpoints: full(this.inFlight, endpoints),
                admit: admitWithin(
                  organizations,
                  endpoints,
                  (id) => this.endpointsInFlight.get(id)?.keys() ?? [],
                ),
              })
            : { claimed: [] };
        return { fannedOut, claimed };
      });
      claimed = outcome.claimed;
      // More may be waiting: new messages from the fan-out, or a claim that found work.
      if (outcome.fannedOut > 0 || claimed.length > 0) this.rerun = true;
    } catch (error) {
      // Nothing is lost: leases expire on their own, and the events stay pending.
      this.logger.error(`Webhook dispatch step failed: ${(error as Error).message}`);
      this.trigger.at(this.clock.nowMs() + 1000);
      return;
    }
    for (const message of claimed) this.start(message);
  }

  private start(message: ClaimedMessage): void {
    this.inFlightTotal += 1;
    count(this.inFlight, message.endpointId, 1);
    count(this.inFlightByOrganization, message.organizationId, 1);
    const ofOrganization =
      this.endpointsInFlight.get(message.organizationId) ?? new Map<string, number>();
    this.endpointsInFlight.set(message.organizationId, ofOrganization);
    count(ofOrganization, message.endpointId, 1);
    const send = this.attempt(message).finally(() => {
      this.sends.delete(send);
      this.inFlightTotal -= 1;
      count(this.inFlight, message.endpointId, -1);
      count(this.inFlightByOrganization, message.organizationId, -1);
      count(ofOrganization, message.endpointId, -1);
      if (ofOrganization.size === 0) this.endpointsInFlight.delete(message.organizationId);
      this.wake();
    });
    this.sends.add(send);
  }

  /** Sends, then writes the attempt; the slot is freed once it is written. */
  private async attempt(message: ClaimedMessage): Promise<void> {
    try {
      await this.recorder.record(await this.attempter.attempt(message));
    } catch (error) {
      // The lease runs out and the message is attempted again.
      this.logger.error(`Could not record a webhook attempt: ${(error as Error).message}`);
    }
  }
}

/** Adds `delta` to a key's count, forgetting keys that reach zero (the maps stay small). */
function count(counts: Map<string, number>, key: string, delta: number): void {
  const n = (counts.get(key) ?? 0) + delta;
  if (n > 0) counts.set(key, n);
  else counts.delete(key);
}
