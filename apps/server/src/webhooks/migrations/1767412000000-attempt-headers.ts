import { type Migration, runStatements } from '../../database/migration';

/**
 * Each attempt keeps the request headers it sent (signatures withheld), so a delivery shows what
 * its receiver got. Attempts made before have none (null).
 */
export const attemptHeadersMigration: Migration = {
  name: 'AttemptHeaders1767412000000',
  up: (db) => runStatements(db, ['ALTER TABLE webhook_attempts ADD COLUMN request_headers TEXT']),
  down: (db) => runStatements(db, ['ALTER TABLE webhook_attempts DROP COLUMN request_headers']),
};
