import type { BeforeApplicationShutdown, OnApplicationBootstrap } from '@nestjs/common';

/**
 * What moves webhook deliveries forward: fans new outbox events out into messages, sends the
 * due ones and records each attempt. Two implementations, chosen in `WebhooksModule` by the
 * configuration: the embedded `EmbeddedWebhookDispatcher` (the database alone) and, with
 * REDIS_URL, the `QueuedWebhookDispatcher` (BullMQ shares the work between instances). This
 * class is also the DI token the rest of the module injects.
 */
export abstract class WebhookDispatcher
  implements OnApplicationBootstrap, BeforeApplicationShutdown
{
  /** Starts looking for work (unless WEBHOOK_DISPATCHER=false). */
  abstract onApplicationBootstrap(): void | Promise<void>;

  /** Stops taking work and lets attempts in flight finish, bounded by WEBHOOK_SHUTDOWN_GRACE. */
  abstract beforeApplicationShutdown(): Promise<void>;

  /**
   * Work may be due now (a delivery was retried or resumed, an event was written): look for it
   * soon rather than on the next poll. Many calls coalesce; a stopped dispatcher ignores them.
   */
  abstract wake(): void;
}
