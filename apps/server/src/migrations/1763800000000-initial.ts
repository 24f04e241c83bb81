import { statementsMigration, timestampColumns } from '../database/migration';
import { organizationListIndexes, organizationTable } from '../database/tenant-table';

/** Organizations, personal access tokens and students. */
export const initialMigration = statementsMigration(
  'Initial1763800000000',
  (t) => [
    `CREATE TABLE organizations (
      id varchar(32) PRIMARY KEY NOT NULL,
      name varchar(200) NOT NULL,
      plan varchar(16) NOT NULL CHECK (plan IN ('standard', 'enterprise')),
      rate_limit_per_minute integer CHECK (rate_limit_per_minute > 0),
      created_at ${t.timestamp} NOT NULL,
      updated_at ${t.timestamp} NOT NULL
    )`,
    organizationTable(
      t,
      'personal_access_tokens',
      [
        'name varchar(200) NOT NULL',
        'token_prefix varchar(16) NOT NULL',
        'token_hash varchar(64) NOT NULL',
        'scopes varchar(1000) NOT NULL',
        ...timestampColumns(t, 'expires_at', 'last_used_at', 'revoked_at'),
      ],
      { updatable: false },
    ),
    `CREATE UNIQUE INDEX uq_pat_token_hash ON personal_access_tokens (token_hash)`,
    `CREATE INDEX idx_pat_org_created ON personal_access_tokens (organization_id, created_at)`,
    organizationTable(t, 'students', [
      'student_number varchar(64) NOT NULL',
      'first_name varchar(100) NOT NULL',
      'last_name varchar(100) NOT NULL',
      'preferred_name varchar(100)',
      'email varchar(254)',
      'date_of_birth varchar(10)',
      "status varchar(16) NOT NULL CHECK (status IN ('active', 'inactive', 'graduated', 'withdrawn'))",
      'grade_level integer CHECK (grade_level BETWEEN 0 AND 12)',
    ]),
    `CREATE UNIQUE INDEX uq_students_org_number ON students (organization_id, student_number)`,
    ...organizationListIndexes('students'),
    `CREATE INDEX idx_students_org_last_name ON students (organization_id, last_name, id)`,
    `CREATE INDEX idx_students_org_first_name ON students (organization_id, first_name, id)`,
  ],
  () => [`DROP TABLE students`, `DROP TABLE personal_access_tokens`, `DROP TABLE organizations`],
);
