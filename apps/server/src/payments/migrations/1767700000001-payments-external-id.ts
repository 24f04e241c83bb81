import { statementsMigration } from '../../database/migration';

/** `external_id` on payments, as on students (1767600000000-students-external-id). */
export const paymentsExternalIdMigration = statementsMigration(
  'PaymentsExternalId1767700000001',
  () => [
    `ALTER TABLE payments ADD COLUMN external_id varchar(128)`,
    `CREATE UNIQUE INDEX uq_payments_org_external_id ON payments (organization_id, external_id) WHERE external_id IS NOT NULL`,
  ],
  () => [`DROP INDEX uq_payments_org_external_id`, `ALTER TABLE payments DROP COLUMN external_id`],
);
