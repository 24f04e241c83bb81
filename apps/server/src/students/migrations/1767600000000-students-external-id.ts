import { statementsMigration } from '../../database/migration';

/**
 * `external_id`: the student's key in the school's own system. Unique per organization where set
 * (a partial index, so any number of students have none); the index also serves
 * `?external_id=` and `ext:` lookups.
 */
export const studentsExternalIdMigration = statementsMigration(
  'StudentsExternalId1767600000000',
  () => [
    `ALTER TABLE students ADD COLUMN external_id varchar(128)`,
    `CREATE UNIQUE INDEX uq_students_org_external_id ON students (organization_id, external_id) WHERE external_id IS NOT NULL`,
  ],
  () => [`DROP INDEX uq_students_org_external_id`, `ALTER TABLE students DROP COLUMN external_id`],
);
