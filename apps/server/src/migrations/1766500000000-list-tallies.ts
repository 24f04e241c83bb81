import {
  dropTallyStatements,
  TALLIED_COLLECTIONS,
  tallyStatements,
} from '../database/list-tallies';
import { dialectTypes, type Migration, runStatements } from '../database/migration';

/**
 * The list totals' tallies (database/list-tallies.ts): the table, the triggers that keep it in
 * each tallied collection's write transactions, and the counts of the rows already there. Only in
 * a transaction: on PostgreSQL that is what keeps a write from slipping in between a trigger's
 * creation and the recount (creating the trigger locks its table against writes until commit).
 */
export const listTalliesMigration: Migration = {
  name: 'ListTallies1766500000000',
  async up(db, dialect) {
    if (!db.isTransactionActive)
      throw new Error(
        'ListTallies1766500000000 must run in a transaction (migrations: each or all)',
      );
    await runStatements(
      db,
      tallyStatements(dialect, dialectTypes(dialect).bigint, TALLIED_COLLECTIONS),
    );
  },
  down: (db, dialect) => runStatements(db, dropTallyStatements(dialect, TALLIED_COLLECTIONS)),
};
