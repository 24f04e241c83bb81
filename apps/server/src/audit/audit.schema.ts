import type { ModuleSchema } from '../database/module-schema';
import { AuditEventRecord } from './audit-event.entity';
import { auditMigration } from './migrations/1766200000000-audit';
import { auditActorsMigration } from './migrations/1766800000000-audit-actors';

export const AUDIT_SCHEMA: ModuleSchema = {
  entities: [AuditEventRecord],
  migrations: [auditMigration, auditActorsMigration],
};
