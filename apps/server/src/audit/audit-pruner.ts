import { Injectable } from '@nestjs/common';
import { HourlyPruner } from '../common/hourly-pruner';
import { AuditService } from './audit.service';

/** Deletes audit entries past `AUDIT_RETENTION_DAYS`, at start and then hourly. */
@Injectable()
export class AuditPruner extends HourlyPruner {
  constructor(private readonly audit: AuditService) {
    super('Audit', 'audit events');
  }

  protected prune(): Promise<number> {
    return this.audit.prune();
  }
}
