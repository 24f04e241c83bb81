import { statementsMigration } from '../../database/migration';

/** Stored responses for `Idempotency-Key` replays. */
export const idempotencyKeysMigration = statementsMigration(
  'IdempotencyKeys1763900000001',
  (t) => [
    // The primary key is the claim: of two concurrent inserts of one key, exactly one succeeds.
    `CREATE TABLE idempotency_keys (
      organization_id varchar(32) NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
      "key" varchar(255) NOT NULL,
      fingerprint varchar(64) NOT NULL,
      state varchar(16) NOT NULL CHECK (state IN ('in_progress', 'completed')),
      lock_token varchar(36),
      locked_until ${t.timestamp},
      response_status integer,
      response_body text,
      created_at ${t.timestamp} NOT NULL,
      completed_at ${t.timestamp},
      PRIMARY KEY (organization_id, "key")
    )`,
    // The hourly purge deletes by age across all organizations.
    `CREATE INDEX idx_idempotency_keys_created ON idempotency_keys (created_at)`,
  ],
  () => [`DROP TABLE idempotency_keys`],
);
