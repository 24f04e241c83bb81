import {
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { AuditService } from './audit.service';

/** Hourly: an entry leaves the API at its retention anyway; the prune only frees the space. */
export const AUDIT_PRUNE_INTERVAL_MS = 60 * 60 * 1000;

/**
 * Deletes audit entries past `AUDIT_RETENTION_DAYS`, at start and then hourly, in every server
 * process: the server already runs its housekeeping on timers (the idempotency purge), so no
 * cron or separate worker is needed, and a DELETE by age is harmless when two instances race.
 */
@Injectable()
export class AuditPruner implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('Audit');
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly audit: AuditService) {}

  onApplicationBootstrap(): void {
    void this.pruneQuietly();
    this.timer = setInterval(() => void this.pruneQuietly(), AUDIT_PRUNE_INTERVAL_MS);
    // Housekeeping must never keep a process alive.
    this.timer.unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private async pruneQuietly(): Promise<void> {
    try {
      const deleted = await this.audit.prune();
      if (deleted > 0) this.logger.log(`Pruned ${deleted} audit events past retention`);
    } catch (error) {
      // A failed prune is retried in an hour; entries past retention are already hidden.
      this.logger.warn(
        `Audit prune failed: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }
}
