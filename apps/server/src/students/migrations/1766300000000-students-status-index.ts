import { statementsMigration } from '../../database/migration';

/**
 * The `status` filter in the list's default order (newest first): without it a filtered page and
 * its bounded count walk every status's rows of the organization through the created_at index,
 * so their cost grows with the collection (bench/collection-size.bench.js).
 */
export const studentsStatusIndexMigration = statementsMigration(
  'StudentsStatusIndex1766300000000',
  () => [
    `CREATE INDEX idx_students_org_status_created ON students (organization_id, status, created_at, id)`,
  ],
  () => [`DROP INDEX idx_students_org_status_created`],
);
