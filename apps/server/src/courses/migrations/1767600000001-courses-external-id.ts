import { statementsMigration } from '../../database/migration';

/** `external_id` on courses, as on students (1767600000000-students-external-id). */
export const coursesExternalIdMigration = statementsMigration(
  'CoursesExternalId1767600000001',
  () => [
    `ALTER TABLE courses ADD COLUMN external_id varchar(128)`,
    `CREATE UNIQUE INDEX uq_courses_org_external_id ON courses (organization_id, external_id) WHERE external_id IS NOT NULL`,
  ],
  () => [`DROP INDEX uq_courses_org_external_id`, `ALTER TABLE courses DROP COLUMN external_id`],
);
