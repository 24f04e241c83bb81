import { statementsMigration } from '../../database/migration';

/** `external_id` on exams and exam results, as on students (1767600000000-students-external-id). */
export const examsExternalIdMigration = statementsMigration(
  'ExamsExternalId1767700000002',
  () => [
    `ALTER TABLE exams ADD COLUMN external_id varchar(128)`,
    `CREATE UNIQUE INDEX uq_exams_org_external_id ON exams (organization_id, external_id) WHERE external_id IS NOT NULL`,
    `ALTER TABLE exam_results ADD COLUMN external_id varchar(128)`,
    `CREATE UNIQUE INDEX uq_exam_results_org_external_id ON exam_results (organization_id, external_id) WHERE external_id IS NOT NULL`,
  ],
  () => [
    `DROP INDEX uq_exam_results_org_external_id`,
    `ALTER TABLE exam_results DROP COLUMN external_id`,
    `DROP INDEX uq_exams_org_external_id`,
    `ALTER TABLE exams DROP COLUMN external_id`,
  ],
);
