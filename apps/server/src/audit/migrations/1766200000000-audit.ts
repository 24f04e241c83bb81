import { type DialectTypes, statementsMigration } from '../../database/migration';
import { organizationTable } from '../../database/tenant-table';

/**
 * The audit log. Rows are only ever inserted (and pruned by age), and read per organization
 * newest first, so the main index is (organization_id, created_at, id); the prune walks
 * created_at alone. `action` has no CHECK: new audited changes add actions without a migration.
 */
function statements(t: DialectTypes): string[] {
  return [
    organizationTable(
      t,
      'audit_events',
      [
        "actor_type varchar(32) NOT NULL CHECK (actor_type IN ('personal_access_token', 'oauth_access_token', 'operator', 'invitation'))",
        'credential_id varchar(64)',
        'user_id varchar(32)',
        'action varchar(64) NOT NULL',
        'target_type varchar(32) NOT NULL',
        'target_id varchar(64) NOT NULL',
        'changes text',
        'ip varchar(64)',
      ],
      { updatable: false },
    ),
    `CREATE INDEX idx_audit_events_org_created ON audit_events (organization_id, created_at, id)`,
    `CREATE INDEX idx_audit_events_org_target ON audit_events (organization_id, target_id, created_at)`,
    `CREATE INDEX idx_audit_events_created ON audit_events (created_at)`,
  ];
}

const DOWN = ['DROP TABLE audit_events'];

/** Released with one name per dialect; both stay as recorded. */
export const auditMigration = statementsMigration(
  { sqlite: 'SqliteAudit1766200000000', postgres: 'PostgresAudit1766200000000' },
  statements,
  () => DOWN,
);
