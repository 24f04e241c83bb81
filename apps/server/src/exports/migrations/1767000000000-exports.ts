import { statementsMigration } from '../../database/migration';

/** Exports and the chunks of their files. */
export const exportsMigration = statementsMigration(
  'Exports1767000000000',
  (t, dialect) => [
    `CREATE TABLE exports (
      id varchar(32) PRIMARY KEY,
      organization_id varchar(32) NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
      collection varchar(32) NOT NULL,
      format varchar(8) NOT NULL CHECK (format IN ('ndjson', 'csv')),
      filters text NOT NULL,
      status varchar(16) NOT NULL CHECK (status IN ('queued', 'running', 'succeeded', 'failed', 'expired')),
      row_count integer NOT NULL DEFAULT 0,
      size_bytes ${t.bigint},
      feed_cursor varchar(64),
      error varchar(200),
      lease_until ${t.timestamp},
      created_at ${t.timestamp} NOT NULL,
      completed_at ${t.timestamp},
      expires_at ${t.timestamp}
    )`,
    `CREATE INDEX idx_exports_org_created ON exports (organization_id, created_at, id)`,
    // The worker's claim (queued, or running past its lease) and the expiry sweep.
    `CREATE INDEX idx_exports_status ON exports (status, lease_until)`,
    `CREATE INDEX idx_exports_expires ON exports (expires_at)`,
    `CREATE TABLE export_chunks (
      export_id varchar(32) NOT NULL REFERENCES exports (id) ON DELETE CASCADE,
      seq integer NOT NULL,
      data ${dialect === 'postgres' ? 'bytea' : 'blob'} NOT NULL,
      PRIMARY KEY (export_id, seq)
    )`,
  ],
  () => [`DROP TABLE export_chunks`, `DROP TABLE exports`],
);
