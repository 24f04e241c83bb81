import type { DialectName } from './dialect';

/**
 * `meta.total` of a list without `q` and with at most one equality filter, read from a counter
 * instead of counted: one row per (organization, collection) and one per value of each tallied
 * field, kept by triggers in the transaction that writes the rows. Triggers see every writer (this
 * server, another instance, the CLI, raw SQL), so a total cannot drift from the rows the way a
 * counter kept by the services could. A list the tallies do not answer (a range, two filters, a
 * field not tallied, a search) keeps the bounded count (`find-page.ts`, TOTAL_COUNT_AHEAD).
 *
 * What it costs: each insert, delete and change of a tallied field also writes its organization's
 * tally rows. On PostgreSQL the trigger is a deferred constraint trigger, run once per row at
 * COMMIT, so the tally rows are locked only while the writer commits: concurrent writes to one
 * organization's collection take turns at their commits, not for their whole transactions
 * (bench/write-cost.bench.js). Each upsert takes the whole-collection row first (a status change
 * upserts it with +0), then the others in key order, so writers of one organization queue rather
 * than deadlock; a transaction that writes rows of two organizations, against another that writes
 * them in the other order, could deadlock (PostgreSQL then aborts one). The server's transactions
 * write one organization's rows. A bulk load pays one call per row at commit, each slower than the
 * last: one organization's load sets `bulkLoadStatements` and ends with `recountOrganization`
 * (the sandbox seed and reset); a load of the whole table disables the trigger and recounts
 * (`tallyRecount`), as bench/collection-size.bench.js does. SQLite's row
 * triggers run at once; SQLite locks the whole database for a write anyway.
 *
 * Not seen by the triggers: TRUNCATE, and on SQLite `INSERT OR REPLACE` / `REPLACE` over an
 * existing row (its implicit delete fires no trigger unless `recursive_triggers` is on). Nothing
 * here does either; an operator who does should delete the collection's tallies and insert
 * `tallyRecount`'s result. A row moved to another organization moves its tallies too. A deleted
 * organization's tallies stay behind at zero (the table has no foreign key: its rows are written
 * by the cascade that deletes the organization's rows, which would then refer to a deleted row).
 */
export const LIST_TALLIES = 'list_tallies';

/** A collection whose list totals are tallied, and the equality filters tallied per value. */
export interface TalliedCollection {
  table: string;
  /** Database columns; each value's rows are tallied, so a `<field>=a,b` total is a sum. */
  fields: readonly string[];
}

/**
 * The collections tallied by migration ListTallies1766500000000, frozen as released: the
 * organization's records that grow without bound. The contract's list queries declare the same
 * (`tally`, checked by common/list/contract-fields.spec.ts); a collection added later declares it
 * there and its migration calls `collectionIndexesMigration` (database/collection-indexes.ts).
 */
export const TALLIED_COLLECTIONS: readonly TalliedCollection[] = [
  { table: 'students', fields: ['status'] },
  { table: 'courses', fields: ['status'] },
  { table: 'enrollments', fields: ['status'] },
  { table: 'payments', fields: ['status'] },
  { table: 'exams', fields: [] },
  { table: 'exam_results', fields: ['status'] },
];

/** The tallied fields of a table, or undefined when its lists are always counted. */
export function talliedFields(table: string): readonly string[] | undefined {
  return TALLIED_COLLECTIONS.find((c) => c.table === table)?.fields;
}

/** The key of the tally of a whole collection (no filter). */
export const WHOLE_COLLECTION = { field: '', value: '' } as const;

const KEY = 'organization_id, collection, field, value';
const UPSERT = `ON CONFLICT (${KEY}) DO UPDATE SET n = ${LIST_TALLIES}.n + excluded.n`;

/** `(field, value-expression)` pairs a row of `table` counts towards: the whole, then per field. */
function tallyKeys(c: TalliedCollection, row: string): [string, string][] {
  return [["''", "''"], ...c.fields.map((f): [string, string] => [`'${f}'`, `${row}.${f}`])];
}

/**
 * The tallies of `c` counted from its rows, as rows of `list_tallies`: the migration's backfill,
 * and what restores them after a bulk load that ran without the triggers.
 */
export function tallyRecount(c: TalliedCollection, where?: string): string {
  const from = `FROM ${c.table}${where ? ` WHERE ${where}` : ''}`;
  const parts = [
    `SELECT organization_id, '${c.table}', '', '', COUNT(*) ${from} GROUP BY organization_id`,
    ...c.fields.map(
      (f) =>
        `SELECT organization_id, '${c.table}', '${f}', ${f}, COUNT(*) ${from} GROUP BY organization_id, ${f}`,
    ),
  ];
  return `INSERT INTO ${LIST_TALLIES} (${KEY}, n) ${parts.join(' UNION ALL ')}`;
}

function triggerName(c: TalliedCollection, event: string): string {
  return `${LIST_TALLIES}_${c.table}_${event}`;
}

function functionName(c: TalliedCollection): string {
  return `${LIST_TALLIES}_${c.table}`;
}

/** The tally table, each collection's triggers, then the backfill of the rows already there. */
export function tallyStatements(
  dialect: DialectName,
  bigint: string,
  collections: readonly TalliedCollection[],
): string[] {
  const table =
    `CREATE TABLE ${LIST_TALLIES} (\n  organization_id varchar(32) NOT NULL,\n  collection varchar(32) NOT NULL,\n` +
    `  field varchar(32) NOT NULL,\n  value varchar(32) NOT NULL,\n  n ${bigint} NOT NULL,\n` +
    `  PRIMARY KEY (${KEY})\n)${dialect === 'sqlite' ? ' WITHOUT ROWID' : ''}`;
  return [table, ...collectionTallyStatements(dialect, collections)];
}

/**
 * The triggers that keep `collections`' tallies, then the counts of the rows already there, for
 * collections that join the tallies after the table exists (`collectionIndexesMigration`). Only
 * in a transaction, as the list-tallies migration.
 */
export function collectionTallyStatements(
  dialect: DialectName,
  collections: readonly TalliedCollection[],
): string[] {
  const triggers = collections.flatMap((c) =>
    dialect === 'postgres' ? postgresTriggers(c) : sqliteTriggers(c),
  );
  // Triggers first: on PostgreSQL creating them locks the tables against writes until this
  // migration commits, so no row is written between the recount and the first trigger.
  return [...triggers, ...collections.map((c) => tallyRecount(c))];
}

/**
 * On PostgreSQL, a transaction that sets this (`SET LOCAL`, `bulkLoadStatements`) writes its rows
 * without the per-row tally upserts, and must recount its organization's tallies before it
 * commits (`recountOrganization`). Per-row upserts of one tally row, all in one transaction, cost
 * more with each row (every one adds a version of the same row): 250,000 of them took 8 minutes.
 */
const BULK_LOAD_SETTING = 'platform.bulk_load';

/**
 * The statements that begin a bulk load of one organization's rows in the open transaction:
 * PostgreSQL's tally triggers skip its rows until it commits. SQLite's triggers run at once and
 * cost the same per row, so they stay on there.
 */
export function bulkLoadStatements(dialect: DialectName): string[] {
  return dialect === 'postgres' ? [`SET LOCAL ${BULK_LOAD_SETTING} = 'on'`] : [];
}

/**
 * Ends a bulk load: the organization's tallies counted again from its rows (with `:organization`
 * bound). On SQLite, where the triggers stayed on, nothing.
 */
export function recountOrganization(dialect: DialectName): string[] {
  if (dialect !== 'postgres') return [];
  const tables = TALLIED_COLLECTIONS.map((c) => `'${c.table}'`).join(', ');
  return [
    `DELETE FROM ${LIST_TALLIES} WHERE organization_id = :organization AND collection IN (${tables})`,
    ...TALLIED_COLLECTIONS.map((c) => tallyRecount(c, 'organization_id = :organization')),
  ];
}

/**
 * A collection's tally function as migrations make it: since BulkLoadTallies1769400000000 it
 * returns at once in a bulk load (`skipsBulkLoads`).
 */
export function postgresTallyFunction(c: TalliedCollection, skipsBulkLoads: boolean): string {
  const fn = functionName(c);
  // Per row, at commit (deferred): the tally rows are locked only while the writer commits.
  const keys = (row: 'NEW' | 'OLD', d: string) =>
    tallyKeys(c, row).map(
      ([field, value]) => `(${row}.organization_id, ${field}, ${value}::text, ${d})`,
    );
  const upsert = (rows: string[]) =>
    `INSERT INTO ${LIST_TALLIES} (${KEY}, n) SELECT o, '${c.table}', f, v, SUM(d) ` +
    `FROM (VALUES ${rows.join(', ')}) AS k (o, f, v, d) GROUP BY o, f, v ` +
    `ORDER BY o, f, v ${UPSERT}`;
  const changed = ['organization_id', ...c.fields]
    .map((f) => `OLD.${f} IS DISTINCT FROM NEW.${f}`)
    .join(' OR ');
  const skip = skipsBulkLoads
    ? `\n  IF current_setting('${BULK_LOAD_SETTING}', true) = 'on' THEN\n    RETURN NULL;\n  END IF;`
    : '';
  return `CREATE OR REPLACE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN${skip}
  IF TG_OP = 'INSERT' THEN
    ${upsert(keys('NEW', '1'))};
  ELSIF TG_OP = 'DELETE' THEN
    ${upsert(keys('OLD', '-1'))};
  ELSIF ${changed} THEN
    ${upsert([...keys('NEW', '1'), ...keys('OLD', '-1')])};
  END IF;
  RETURN NULL;
END $$`;
}

function postgresTriggers(c: TalliedCollection): string[] {
  const fn = functionName(c);
  return [
    postgresTallyFunction(c, true),
    `CREATE CONSTRAINT TRIGGER ${triggerName(c, 'row')} AFTER INSERT OR UPDATE OR DELETE ON ${c.table} ` +
      `DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION ${fn}()`,
  ];
}

function sqliteTriggers(c: TalliedCollection): string[] {
  const add = (row: string, keys: [string, string][]) =>
    `INSERT INTO ${LIST_TALLIES} (${KEY}, n) VALUES ` +
    keys
      .map(([field, value]) => `(${row}.organization_id, '${c.table}', ${field}, ${value}, 1)`)
      .join(', ') +
    ` ${UPSERT};`;
  const subtract = (keys: [string, string][]) =>
    keys
      .map(
        ([field, value]) =>
          `UPDATE ${LIST_TALLIES} SET n = n - 1 WHERE organization_id = OLD.organization_id ` +
          `AND collection = '${c.table}' AND field = ${field} AND value = ${value};`,
      )
      .join(' ');
  return [
    `CREATE TRIGGER ${triggerName(c, 'insert')} AFTER INSERT ON ${c.table} FOR EACH ROW ` +
      `BEGIN ${add('NEW', tallyKeys(c, 'NEW'))} END`,
    `CREATE TRIGGER ${triggerName(c, 'delete')} AFTER DELETE ON ${c.table} FOR EACH ROW ` +
      `BEGIN ${subtract(tallyKeys(c, 'OLD'))} END`,
    // A row moved to another organization: its whole-collection tally moves here, each field's
    // below (subtract reads OLD.organization_id, add NEW's).
    `CREATE TRIGGER ${triggerName(c, 'update_organization')} AFTER UPDATE OF organization_id ` +
      `ON ${c.table} FOR EACH ROW WHEN OLD.organization_id IS NOT NEW.organization_id ` +
      `BEGIN ${subtract([["''", "''"]])} ${add('NEW', [["''", "''"]])} END`,
    ...c.fields.map(
      (f) =>
        `CREATE TRIGGER ${triggerName(c, `update_${f}`)} AFTER UPDATE OF ${f}, organization_id ` +
        `ON ${c.table} FOR EACH ROW ` +
        `WHEN OLD.${f} IS NOT NEW.${f} OR OLD.organization_id IS NOT NEW.organization_id ` +
        `BEGIN ${subtract([[`'${f}'`, `OLD.${f}`]])} ${add('NEW', [[`'${f}'`, `NEW.${f}`]])} END`,
    ),
  ];
}

/** Undoes tallyStatements. */
export function dropTallyStatements(
  dialect: DialectName,
  collections: readonly TalliedCollection[],
): string[] {
  return [...dropCollectionTallyStatements(dialect, collections), `DROP TABLE ${LIST_TALLIES}`];
}

/** Undoes collectionTallyStatements (its rows in the tally table stay; see collection-indexes). */
export function dropCollectionTallyStatements(
  dialect: DialectName,
  collections: readonly TalliedCollection[],
): string[] {
  const triggers = collections.flatMap((c) => {
    const events =
      dialect === 'postgres'
        ? ['row']
        : ['insert', 'delete', 'update_organization', ...c.fields.map((f) => `update_${f}`)];
    return events.map(
      (e) => `DROP TRIGGER ${triggerName(c, e)}${dialect === 'postgres' ? ` ON ${c.table}` : ''}`,
    );
  });
  const functions =
    dialect === 'postgres' ? collections.map((c) => `DROP FUNCTION ${functionName(c)}()`) : [];
  return [...triggers, ...functions];
}
