import { Logger } from '@nestjs/common';
import type { Clock } from '../common/clock';
import type { TransactionRunner } from '../common/transactions';
import { Batcher } from './batcher';
import type { DeliveryStore } from './delivery-store';
import type { CompletedAttempt, Disabled } from './delivery-types';

/** Writes of a batch of attempts, and the pause between them. */
const WRITE_TRIES = 3;
const WRITE_RETRY_MS = 1000;

/** Says in the log which endpoints the last write disabled, and why. */
function logDisabled(logger: Logger, disabled: readonly Disabled[]): void {
  for (const { endpointId, reason } of disabled) {
    logger.warn(
      `Disabled webhook endpoint ${endpointId}: ${reason === 'gone' ? 'it answered 410 Gone' : 'every attempt failed for too long'}`,
    );
  }
}

/**
 * Writes finished attempts, the one way both dispatchers record them. Attempts finishing
 * together are written in one transaction: a dispatcher runs dozens at once, and one
 * transaction per attempt made the database the bottleneck.
 */
export class AttemptRecorder {
  private readonly logger = new Logger('Webhooks');
  private readonly batcher = new Batcher<CompletedAttempt>((completed) => this.write(completed));
  private closed = false;

  /** `retryDue`: a retry was scheduled for then (the dispatcher looks for work at that time). */
  constructor(
    private readonly transactions: TransactionRunner,
    private readonly store: DeliveryStore,
    private readonly retryDue: (at: number) => void,
    private readonly clock: Clock,
  ) {}

  /**
   * Resolves once the attempt is written, so "done" means durable; rejects if the write failed
   * (the message's lease then runs out and it is attempted again). After `close`, an attempt is
   * not written: it was cut off by the shutdown and is retried like one.
   */
  record(attempt: CompletedAttempt): Promise<void> {
    if (this.closed) return Promise.resolve();
    return this.batcher.add(attempt);
  }

  /** Shutdown: finishes the writes under way and takes no more. */
  async close(): Promise<void> {
    this.closed = true;
    await this.batcher.idle();
  }

  private async write(completed: CompletedAttempt[]): Promise<void> {
    // A failed write is tried again a few times before its attempts are given up to their
    // leases (and sent again): a moment's database error should not cost a duplicate delivery.
    for (let tries = 1; ; tries += 1) {
      try {
        const recorded = await this.transactions.run((manager) =>
          this.store.record(manager, completed, this.clock.now()),
        );
        logDisabled(this.logger, recorded.disabled);
        if (recorded.nextRetryAt) this.retryDue(recorded.nextRetryAt.getTime());
        return;
      } catch (error) {
        if (tries >= WRITE_TRIES || this.closed) throw error;
        this.logger.error(
          `Could not record ${completed.length} webhook attempt(s), trying again: ${(error as Error).message}`,
        );
        await new Promise((resolve) => setTimeout(resolve, WRITE_RETRY_MS));
      }
    }
  }
}
