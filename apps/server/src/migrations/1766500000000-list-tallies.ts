import {
  dropTallyStatements,
  TALLIED_COLLECTIONS,
  tallyStatements,
} from '../database/list-tallies';
import { statementsMigration } from '../database/migration';

/**
 * The list totals' tallies (database/list-tallies.ts): the table, the triggers that keep it in
 * each tallied collection's write transactions, and the counts of the rows already there.
 */
export const listTalliesMigration = statementsMigration(
  'ListTallies1766500000000',
  (t, dialect) => tallyStatements(dialect, t.bigint, TALLIED_COLLECTIONS),
  (_t, dialect) => dropTallyStatements(dialect, TALLIED_COLLECTIONS),
);
