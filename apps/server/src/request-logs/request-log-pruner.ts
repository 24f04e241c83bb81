import { Injectable } from '@nestjs/common';
import { HourlyPruner } from '../common/hourly-pruner';
import { RequestLogsService } from './request-logs.service';

/** Deletes request log entries past `REQUEST_LOG_RETENTION_DAYS`, at start and then hourly. */
@Injectable()
export class RequestLogPruner extends HourlyPruner {
  constructor(private readonly logs: RequestLogsService) {
    super('RequestLog', 'request log entries');
  }

  protected prune(): Promise<number> {
    return this.logs.prune();
  }
}
