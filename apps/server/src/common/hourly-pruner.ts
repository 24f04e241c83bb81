import { Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';

/** Hourly: an entry leaves the API at its retention anyway; the prune only frees the space. */
export const PRUNE_INTERVAL_MS = 60 * 60 * 1000;

/**
 * Deletes what is past its retention, at start and then hourly, in every server process: the
 * server already runs its housekeeping on timers (the idempotency purge), so no cron or separate
 * worker is needed, and a DELETE by age is harmless when two instances race. A subclass names
 * what it prunes and how.
 */
export abstract class HourlyPruner implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger: Logger;
  private timer: NodeJS.Timeout | undefined;

  /** `what`: the entries' name in the log lines ("audit events"). */
  protected constructor(
    context: string,
    private readonly what: string,
  ) {
    this.logger = new Logger(context);
  }

  /** Deletes the entries past retention; how many it deleted. */
  protected abstract prune(): Promise<number>;

  onApplicationBootstrap(): void {
    void this.pruneQuietly();
    this.timer = setInterval(() => void this.pruneQuietly(), PRUNE_INTERVAL_MS);
    // Housekeeping must never keep a process alive.
    this.timer.unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private async pruneQuietly(): Promise<void> {
    try {
      const deleted = await this.prune();
      if (deleted > 0) this.logger.log(`Pruned ${deleted} ${this.what} past retention`);
    } catch (error) {
      // A failed prune is retried in an hour; entries past retention are already hidden.
      this.logger.warn(
        `Pruning ${this.what} failed: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }
}
