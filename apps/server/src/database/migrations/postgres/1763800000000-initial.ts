import type { MigrationInterface, QueryRunner } from 'typeorm';

export class Initial1763800000000 implements MigrationInterface {
  name = 'Initial1763800000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      CREATE TABLE organizations (
        id varchar(32) PRIMARY KEY NOT NULL,
        name varchar(200) NOT NULL,
        plan varchar(16) NOT NULL CHECK (plan IN ('standard', 'enterprise')),
        rate_limit_per_minute integer CHECK (rate_limit_per_minute > 0),
        created_at timestamptz(3) NOT NULL,
        updated_at timestamptz(3) NOT NULL
      )`);
    await db.query(`
      CREATE TABLE personal_access_tokens (
        id varchar(32) PRIMARY KEY NOT NULL,
        organization_id varchar(32) NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
        name varchar(200) NOT NULL,
        token_prefix varchar(16) NOT NULL,
        token_hash varchar(64) NOT NULL,
        scopes varchar(1000) NOT NULL,
        expires_at timestamptz(3),
        last_used_at timestamptz(3),
        revoked_at timestamptz(3),
        created_at timestamptz(3) NOT NULL
      )`);
    await db.query(`CREATE UNIQUE INDEX uq_pat_token_hash ON personal_access_tokens (token_hash)`);
    await db.query(
      `CREATE INDEX idx_pat_org_created ON personal_access_tokens (organization_id, created_at)`,
    );
    await db.query(`
      CREATE TABLE students (
        id varchar(32) PRIMARY KEY NOT NULL,
        organization_id varchar(32) NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
        student_number varchar(64) NOT NULL,
        first_name varchar(100) NOT NULL,
        last_name varchar(100) NOT NULL,
        preferred_name varchar(100),
        email varchar(254),
        date_of_birth varchar(10),
        status varchar(16) NOT NULL CHECK (status IN ('active', 'inactive', 'graduated', 'withdrawn')),
        grade_level integer CHECK (grade_level BETWEEN 0 AND 12),
        created_at timestamptz(3) NOT NULL,
        updated_at timestamptz(3) NOT NULL
      )`);
    await db.query(
      `CREATE UNIQUE INDEX uq_students_org_number ON students (organization_id, student_number)`,
    );
    await db.query(
      `CREATE INDEX idx_students_org_created ON students (organization_id, created_at, id)`,
    );
    await db.query(
      `CREATE INDEX idx_students_org_updated ON students (organization_id, updated_at, id)`,
    );
    await db.query(
      `CREATE INDEX idx_students_org_last_name ON students (organization_id, last_name, id)`,
    );
    await db.query(
      `CREATE INDEX idx_students_org_first_name ON students (organization_id, first_name, id)`,
    );
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP TABLE students`);
    await db.query(`DROP TABLE personal_access_tokens`);
    await db.query(`DROP TABLE organizations`);
  }
}
