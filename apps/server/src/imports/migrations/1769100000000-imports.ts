import { statementsMigration } from '../../database/migration';

/** SIS imports, their staged rows and their error reports. */
export const importsMigration = statementsMigration(
  'Imports1769100000000',
  (t) => [
    `CREATE TABLE imports (
      id varchar(32) PRIMARY KEY,
      organization_id varchar(32) NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
      owner_user_id varchar(32),
      collection varchar(32) NOT NULL,
      mode varchar(8) NOT NULL CHECK (mode IN ('upsert', 'full')),
      format varchar(8) NOT NULL CHECK (format IN ('ndjson', 'csv')),
      dry_run boolean NOT NULL,
      change_threshold ${t.double} NOT NULL,
      confirmed boolean NOT NULL,
      status varchar(16) NOT NULL CHECK (status IN ('receiving', 'queued', 'running', 'succeeded', 'failed')),
      phase varchar(16) NOT NULL CHECK (phase IN ('upsert', 'withdraw')),
      row_count integer NOT NULL,
      next_row integer NOT NULL,
      withdrawn_through varchar(255),
      created integer NOT NULL DEFAULT 0,
      updated integer NOT NULL DEFAULT 0,
      unchanged integer NOT NULL DEFAULT 0,
      failed integer NOT NULL DEFAULT 0,
      withdrawn integer NOT NULL DEFAULT 0,
      error varchar(500),
      lease_until ${t.timestamp},
      claim_token varchar(32),
      created_at ${t.timestamp} NOT NULL,
      completed_at ${t.timestamp}
    )`,
    `CREATE INDEX idx_imports_org_created ON imports (organization_id, created_at, id)`,
    // The runner's claim: queued, or running past its lease.
    `CREATE INDEX idx_imports_status ON imports (status, lease_until)`,
    `CREATE TABLE import_rows (
      import_id varchar(32) NOT NULL REFERENCES imports (id) ON DELETE CASCADE,
      row_number integer NOT NULL,
      external_id varchar(255),
      item text,
      PRIMARY KEY (import_id, row_number)
    )`,
    // A full import's withdrawals: the collection's external ids the file does not hold.
    `CREATE INDEX idx_import_rows_external_id ON import_rows (import_id, external_id)`,
    `CREATE TABLE import_errors (
      import_id varchar(32) NOT NULL REFERENCES imports (id) ON DELETE CASCADE,
      row_number integer NOT NULL,
      seq integer NOT NULL,
      external_id varchar(255),
      field varchar(200) NOT NULL,
      code varchar(64) NOT NULL,
      problem varchar(1000) NOT NULL,
      PRIMARY KEY (import_id, row_number, seq)
    )`,
  ],
  () => [`DROP TABLE import_errors`, `DROP TABLE import_rows`, `DROP TABLE imports`],
);
