import { statementsMigration } from '../../database/migration';

/**
 * OneRoster bundles: a bundle is several imports (one per file it applies) run in order. Each
 * holds the bundle's import ids in order, the file it came from, and the import before it; and
 * counts the rows that have no place here (`skipped`).
 */
export const importBundlesMigration = statementsMigration(
  'ImportBundles1769200000000',
  () => [
    `ALTER TABLE imports ADD COLUMN bundle varchar(110)`,
    `ALTER TABLE imports ADD COLUMN source_file varchar(64)`,
    `ALTER TABLE imports ADD COLUMN after_import_id varchar(32)`,
    `ALTER TABLE imports ADD COLUMN skipped integer NOT NULL DEFAULT 0`,
  ],
  () => [
    `ALTER TABLE imports DROP COLUMN skipped`,
    `ALTER TABLE imports DROP COLUMN after_import_id`,
    `ALTER TABLE imports DROP COLUMN source_file`,
    `ALTER TABLE imports DROP COLUMN bundle`,
  ],
);
