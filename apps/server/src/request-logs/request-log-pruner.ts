import {
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { RequestLogsService } from './request-logs.service';

/** Hourly, like the audit log: an entry leaves the API at its retention anyway. */
export const REQUEST_LOG_PRUNE_INTERVAL_MS = 60 * 60 * 1000;

/**
 * Deletes request log entries past `REQUEST_LOG_RETENTION_DAYS`, at start and then hourly, in
 * every server process (a DELETE by age is harmless when two instances race).
 */
@Injectable()
export class RequestLogPruner implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('RequestLog');
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly logs: RequestLogsService) {}

  onApplicationBootstrap(): void {
    void this.pruneQuietly();
    this.timer = setInterval(() => void this.pruneQuietly(), REQUEST_LOG_PRUNE_INTERVAL_MS);
    this.timer.unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private async pruneQuietly(): Promise<void> {
    try {
      const deleted = await this.logs.prune();
      if (deleted > 0) this.logger.log(`Pruned ${deleted} request log entries past retention`);
    } catch (error) {
      this.logger.warn(
        `Request log prune failed: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }
}
