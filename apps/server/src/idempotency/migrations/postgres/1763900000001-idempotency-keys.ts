import type { MigrationInterface, QueryRunner } from 'typeorm';

export class IdempotencyKeys1763900000001 implements MigrationInterface {
  name = 'IdempotencyKeys1763900000001';

  async up(db: QueryRunner): Promise<void> {
    // The primary key is the claim: of two concurrent inserts of one key, exactly one succeeds.
    await db.query(`
      CREATE TABLE idempotency_keys (
        organization_id varchar(32) NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
        "key" varchar(255) NOT NULL,
        fingerprint varchar(64) NOT NULL,
        state varchar(16) NOT NULL CHECK (state IN ('in_progress', 'completed')),
        lock_token varchar(36),
        locked_until timestamptz(3),
        response_status integer,
        response_body text,
        created_at timestamptz(3) NOT NULL,
        completed_at timestamptz(3),
        PRIMARY KEY (organization_id, "key")
      )`);
    // The hourly purge deletes by age across all organizations.
    await db.query(`CREATE INDEX idx_idempotency_keys_created ON idempotency_keys (created_at)`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP TABLE idempotency_keys`);
  }
}
