import { type DialectTypes, statementsMigration } from '../../database/migration';
import { organizationTable } from '../../database/tenant-table';

/**
 * The request log. Rows are inserted in batches and pruned by age; read per organization newest
 * first (organization_id, created_at, id), and summed per hour for the usage figures over the
 * same index. The prune walks created_at alone.
 */
function statements(t: DialectTypes): string[] {
  return [
    organizationTable(
      t,
      'request_logs',
      [
        'method varchar(8) NOT NULL',
        'route varchar(200) NOT NULL',
        'status integer NOT NULL',
        'status_class varchar(3) NOT NULL',
        `latency_ms ${t.double} NOT NULL`,
        "credential_type varchar(32) NOT NULL CHECK (credential_type IN ('personal_access_token', 'oauth_access_token'))",
        'credential_id varchar(64) NOT NULL',
        'request_id varchar(128) NOT NULL',
        'error_code varchar(64)',
      ],
      { updatable: false },
    ),
    `CREATE INDEX idx_request_logs_org_created ON request_logs (organization_id, created_at, id)`,
    `CREATE INDEX idx_request_logs_created ON request_logs (created_at)`,
  ];
}

export const requestLogsMigration = statementsMigration(
  'RequestLogs1766900000000',
  statements,
  () => ['DROP TABLE request_logs'],
);
