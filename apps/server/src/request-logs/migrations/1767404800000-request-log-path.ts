import { statementsMigration } from '../../database/migration';

/**
 * The path of each request (with its ids, never the query string), for an entry's detail. Null on
 * the entries recorded before it; no index: it is shown, not filtered on.
 */
export const requestLogPathMigration = statementsMigration(
  'RequestLogPath1767404800000',
  () => ['ALTER TABLE request_logs ADD COLUMN path varchar(500)'],
  () => ['ALTER TABLE request_logs DROP COLUMN path'],
);
