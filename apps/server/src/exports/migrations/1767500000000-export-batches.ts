import { statementsMigration } from '../../database/migration';

/**
 * The batch an export was started in (`POST /v1/exports/batch`): the exports of one batch are
 * claimed, read from one snapshot and finished together. Null for an export started alone. And
 * the token of the claim running an export, which fences out a runner whose lease lapsed.
 */
export const exportBatchesMigration = statementsMigration(
  'ExportBatches1767500000000',
  () => [
    'ALTER TABLE exports ADD COLUMN batch_id varchar(32)',
    'CREATE INDEX idx_exports_batch ON exports (batch_id)',
    'ALTER TABLE exports ADD COLUMN claim_token varchar(32)',
  ],
  () => [
    'ALTER TABLE exports DROP COLUMN claim_token',
    'DROP INDEX idx_exports_batch',
    'ALTER TABLE exports DROP COLUMN batch_id',
  ],
);
