import type { QueryRunner } from 'typeorm';
import { runStatements } from '../../database/migration';

/**
 * SQLite cannot alter a CHECK constraint, so the table is rebuilt (sqlite.org/lang_altertable,
 * "making other kinds of table schema changes"): the new table is the old one's own CREATE
 * statement with the constraint replaced, so columns, indexes and triggers (the search index's,
 * which keep `webhook_endpoints_search` in step) other migrations added survive. The search
 * index's rows are keyed by endpoint id, which the rebuild keeps, so they stay valid.
 * TypeORM runs SQLite migrations with foreign keys off, so dropping the old table cascades nothing.
 */
export async function rebuildEndpointsSqlite(db: QueryRunner, reasons: string): Promise<void> {
  const [table] = (await db.query(
    `SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'webhook_endpoints'`,
  )) as { sql: string }[];
  const indexes = (await db.query(
    `SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'webhook_endpoints' AND sql IS NOT NULL`,
  )) as { sql: string }[];
  const triggers = (await db.query(
    `SELECT sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'webhook_endpoints'`,
  )) as { sql: string }[];
  const check = /disabled_reason varchar\(\d+\) CHECK \(disabled_reason IN \([^)]*\)\)/;
  if (!table || !check.test(table.sql)) {
    throw new Error('webhook_endpoints.disabled_reason is not as the webhooks migration made it');
  }
  const created = table.sql
    .replace(/^CREATE TABLE "?webhook_endpoints"?/, 'CREATE TABLE webhook_endpoints_next')
    .replace(check, `disabled_reason varchar(32) CHECK (disabled_reason IN (${reasons}))`);
  await runStatements(db, [
    created,
    `INSERT INTO webhook_endpoints_next SELECT * FROM webhook_endpoints`,
    `DROP TABLE webhook_endpoints`,
    `ALTER TABLE webhook_endpoints_next RENAME TO webhook_endpoints`,
    ...indexes.map((index) => index.sql),
    ...triggers.map((trigger) => trigger.sql),
  ]);
}
