import { postgresTallyFunction, TALLIED_COLLECTIONS } from '../database/list-tallies';
import { statementsMigration } from '../database/migration';

/**
 * PostgreSQL's tally functions skip the rows of a bulk load (`bulkLoadStatements`), which
 * recounts its organization's tallies instead: a sandbox's seed of 50,000 students wrote
 * 250,000 rows, each upserting the same tally rows at commit. SQLite's triggers are unchanged.
 */
export const bulkLoadTalliesMigration = statementsMigration(
  'BulkLoadTallies1769400000000',
  (_types, dialect) =>
    dialect === 'postgres' ? TALLIED_COLLECTIONS.map((c) => postgresTallyFunction(c, true)) : [],
  (_types, dialect) =>
    dialect === 'postgres' ? TALLIED_COLLECTIONS.map((c) => postgresTallyFunction(c, false)) : [],
);
