import type { BeforeApplicationShutdown, OnApplicationBootstrap } from '@nestjs/common';
import type { Clock } from '../common/clock';
import type { TransactionRunner } from '../common/transactions';
import type { WebhookConfig } from '../config/env';
import type { EventsService } from '../events/events.service';
import type { Metrics } from '../metrics/metrics';
import { AttemptRecorder } from './attempt-recorder';
import { WebhookAttempter } from './attempter';
import type { DeliveryStore } from './delivery-store';
import type { SecretBox } from './secret-box';
import { WorkTrigger } from './work-trigger';

/** What either dispatcher is built from (`WebhooksModule` provides it). */
export interface DispatcherParts {
  config: WebhookConfig;
  transactions: TransactionRunner;
  events: EventsService;
  store: DeliveryStore;
  secrets: SecretBox;
  metrics?: Metrics;
  clock: Clock;
}

/**
 * What moves webhook deliveries forward: fans new outbox events out into messages, sends the
 * due ones and records each attempt. Two implementations, chosen in `WebhooksModule` by the
 * configuration: the embedded `EmbeddedWebhookDispatcher` (the database alone) and, with
 * REDIS_URL, the `QueuedWebhookDispatcher` (BullMQ shares the work between instances). This
 * class is also the DI token the rest of the module injects.
 *
 * Both send with the same `WebhookAttempter`, write attempts through the same `AttemptRecorder`
 * and look for work on the same triggers; they differ in how due messages reach a sender.
 */
export abstract class WebhookDispatcher
  implements OnApplicationBootstrap, BeforeApplicationShutdown
{
  protected readonly config: WebhookConfig;
  protected readonly transactions: TransactionRunner;
  protected readonly store: DeliveryStore;
  protected readonly attempter: WebhookAttempter;
  protected readonly recorder: AttemptRecorder;
  /** The poll and the retries falling due; `trigger.active` says whether the dispatcher runs. */
  protected readonly trigger: WorkTrigger;
  protected readonly clock: Clock;
  private readonly events: EventsService;

  constructor(parts: DispatcherParts) {
    this.config = parts.config;
    this.transactions = parts.transactions;
    this.store = parts.store;
    this.events = parts.events;
    this.clock = parts.clock;
    this.trigger = new WorkTrigger(() => this.wake(), parts.clock);
    this.attempter = new WebhookAttempter(parts.config, parts.secrets, parts.clock, parts.metrics);
    this.recorder = new AttemptRecorder(
      parts.transactions,
      parts.store,
      (at) => this.trigger.at(at),
      parts.clock,
    );
  }

  /** Starts looking for work (unless WEBHOOK_DISPATCHER=false). */
  abstract onApplicationBootstrap(): void | Promise<void>;

  /** Stops taking work and lets attempts in flight finish, bounded by WEBHOOK_SHUTDOWN_GRACE. */
  abstract beforeApplicationShutdown(): Promise<void>;

  /**
   * Work may be due now (a delivery was retried or resumed, an event was written): look for it
   * soon rather than on the next poll. Many calls coalesce; a stopped dispatcher ignores them.
   */
  abstract wake(): void;

  /** Looks for work when an event commits, on the poll, and when a retry falls due. */
  protected startLooking(): void {
    this.events.onEventCommitted(() => this.wake());
    this.trigger.start(this.config.pollIntervalMs);
  }
}
