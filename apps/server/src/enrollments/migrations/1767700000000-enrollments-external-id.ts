import { statementsMigration } from '../../database/migration';

/** `external_id` on enrollments, as on students (1767600000000-students-external-id). */
export const enrollmentsExternalIdMigration = statementsMigration(
  'EnrollmentsExternalId1767700000000',
  () => [
    `ALTER TABLE enrollments ADD COLUMN external_id varchar(128)`,
    `CREATE UNIQUE INDEX uq_enrollments_org_external_id ON enrollments (organization_id, external_id) WHERE external_id IS NOT NULL`,
  ],
  () => [
    `DROP INDEX uq_enrollments_org_external_id`,
    `ALTER TABLE enrollments DROP COLUMN external_id`,
  ],
);
