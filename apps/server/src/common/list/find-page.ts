import {
  type ListCondition,
  type ListQuery,
  type RangeOperator,
  SEARCH_LENGTH,
} from '@platform/contract';
import type { ObjectLiteral, Repository } from 'typeorm';
import {
  columnName,
  dialectOf,
  hydrate,
  quoteIdentifier,
  selectList,
  SqlParams,
  toDatabaseValue,
} from '../sql';
import {
  isSearchTimeout,
  SEARCH_DEADLINE_FUNCTION,
  SEARCH_FOLD_FUNCTION,
  searchTimedOut,
} from './search-budget';

/** How a collection's API field names map to entity properties. */
export interface ListFields {
  /** API field (as in `sort`, filters and ranges) → entity property. */
  columns: Record<string, string>;
  /**
   * Entity properties that `q` searches. Each has a trigram index (the search-index migration):
   * on SQLite the columns of `<table>_search`, on PostgreSQL a GIN index on `lower(column)`.
   * A q shorter than a trigram reads the organization's rows instead, under the same budget.
   */
  search?: readonly string[];
}

export interface ListOptions {
  /** How long a `q` search may take (`SEARCH_TIMEOUT`); past it the list is a 503. */
  searchTimeoutMs: number;
}

export interface Statement {
  sql: string;
  params: unknown[];
}

const RANGE_SQL: Record<RangeOperator, string> = { gte: '>=', gt: '>', lte: '<=', lt: '<' };

/**
 * Translates a validated list query into SQL for one organization: one count and one page.
 * The page is a deferred join: the inner query walks the (organization_id, sort field, id)
 * index for ids only, so OFFSET skips index entries rather than whole rows, and only the
 * page's rows are then read from the table. That keeps page 300 close to page 1 in cost.
 * A `q` search runs under a time budget and answers 503 past it, whether it is served by the
 * trigram index (3+ characters) or scans the organization's rows (1–2 characters).
 */
export async function findPage<T extends ObjectLiteral>(
  repo: Repository<T>,
  organizationId: string,
  query: ListQuery,
  fields: ListFields,
  options?: ListOptions,
): Promise<{ rows: T[]; total: number }> {
  const searching = isSearch(query, fields);
  // A programming error: a collection with searchable fields must pass its budget.
  if (searching && !options) throw new Error('a searchable list needs ListOptions');
  const budgetMs = options?.searchTimeoutMs ?? 0;
  const { count, page, pageHasTotal } = pageStatements(
    repo,
    organizationId,
    query,
    fields,
    Date.now() + budgetMs,
  );
  type CountRow = { total: number | string };
  type PageRow = Record<string, unknown> & { search_total?: number };
  let total: number;
  let pageRows: PageRow[];
  try {
    if (pageHasTotal) {
      // SQLite search (indexed or scan): one pass over the matches gives the page and the total;
      // a count runs only for an empty page past the first (its total is not on any row).
      pageRows = await repo.query<PageRow[]>(page.sql, page.params);
      total =
        pageRows.length > 0
          ? Number(pageRows[0]!.search_total)
          : query.page === 1
            ? 0
            : Number((await repo.query<CountRow[]>(count.sql, count.params))[0]?.total ?? 0);
    } else if (searching) {
      // PostgreSQL search. SET LOCAL lasts until the end of this transaction, so the pooled
      // connection goes back with its usual (unlimited) timeout.
      [total, pageRows] = await repo.manager.transaction(async (manager) => {
        await manager.query(`SET LOCAL statement_timeout = ${Math.ceil(budgetMs)}`);
        const counted = await manager.query<CountRow[]>(count.sql, count.params);
        return [
          Number(counted[0]?.total ?? 0),
          await manager.query<PageRow[]>(page.sql, page.params),
        ];
      });
    } else {
      const [counted, rows] = await Promise.all([
        repo.query<CountRow[]>(count.sql, count.params),
        repo.query<PageRow[]>(page.sql, page.params),
      ]);
      [total, pageRows] = [Number(counted[0]?.total ?? 0), rows];
    }
  } catch (error) {
    if (searching && isSearchTimeout(error)) throw searchTimedOut(budgetMs);
    throw error;
  }
  return { rows: pageRows.map((row) => hydrate(repo, row)), total };
}

function isSearch(query: ListQuery, fields: ListFields): boolean {
  return query.q !== undefined && !!fields.search?.length;
}

/** An FTS5 query that matches `q` as one phrase: with the trigram tokenizer, as a substring. */
function ftsPhrase(q: string): string {
  return `"${q.replace(/"/g, '""')}"`;
}

/**
 * The count and page statements of a list query (exported so tests can check their plans).
 * `searchDeadline` (epoch ms) bounds a `q` search on SQLite; PostgreSQL's is statement_timeout.
 */
export function pageStatements<T extends ObjectLiteral>(
  repo: Repository<T>,
  organizationId: string,
  query: ListQuery,
  fields: ListFields,
  searchDeadline = 0,
): { count: Statement; page: Statement; pageHasTotal: boolean } {
  const dialect = dialectOf(repo);
  const tableName = repo.metadata.tableName;
  const table = quoteIdentifier(tableName);
  // Qualified, because a SQLite search joins the search index, whose columns share the names.
  const qualified = (property: string) => `${table}.${quoteIdentifier(columnName(repo, property))}`;
  const column = (field: string): string => {
    const property = fields.columns[field];
    // The contract only lets through fields the collection declared; a miss is a programming error.
    if (!property) throw new Error(`list field '${field}' has no column mapping`);
    return qualified(property);
  };
  const id = `${table}."id"`;

  // A SQLite search of 3+ characters starts from the trigram index, so it reads only rows that
  // contain q: the CROSS JOINs fix that order (SQLite never reorders them), whatever the
  // organization's size. A shorter q has no trigram to look up: it scans the organization's rows.
  const search = quoteIdentifier(`${tableName}_search`);
  const keys = quoteIdentifier(`${tableName}_search_keys`);
  const sqliteSearch = dialect === 'sqlite' && isSearch(query, fields);
  const indexed = sqliteSearch && [...(query.q ?? '')].length >= SEARCH_LENGTH.indexed;
  const scanned = sqliteSearch && !indexed;
  const from = indexed
    ? `${search} CROSS JOIN ${keys} ON ${keys}."key" = ${search}."rowid" CROSS JOIN ${table} ON ${id} = ${keys}."id"`
    : table;

  const where = (params: SqlParams): string => {
    const clauses: string[] = [];
    if (indexed) {
      clauses.push(
        `${search} MATCH ${params.add(ftsPhrase(query.q ?? ''))}`,
        `${SEARCH_DEADLINE_FUNCTION}(${params.add(searchDeadline)}, ${search}."rowid")`,
      );
    }
    clauses.push(`${qualified('organizationId')} = ${params.add(organizationId)}`);
    if (scanned) {
      // Called for every row of the organization the scan reads, matching or not: it only needs
      // the id, so SQLite evaluates it before the searched columns are read.
      clauses.push(`${SEARCH_DEADLINE_FUNCTION}(${params.add(searchDeadline)}, ${id})`);
    }
    for (const condition of query.conditions)
      clauses.push(predicate(repo, fields, column, condition, params));
    if (scanned) {
      // SQLite's LOWER() folds ASCII only; the fold function folds as the trigram index does
      // (ÉMILE matches é), and instr() takes `%` and `_` literally.
      const needle = (query.q ?? '').toLowerCase();
      const searched = (fields.search ?? []).map(
        (property) =>
          `instr(${SEARCH_FOLD_FUNCTION}(${qualified(property)}), ${params.add(needle)}) > 0`,
      );
      clauses.push(`(${searched.join(' OR ')})`);
    } else if (!indexed && query.q !== undefined && fields.search?.length) {
      // PostgreSQL: each `lower(column)` has a pg_trgm GIN index that serves this LIKE from 3
      // characters on; a shorter q is read from the organization's rows, under statement_timeout.
      const pattern = `%${query.q.toLowerCase().replace(/[\\%_]/g, (ch) => `\\${ch}`)}%`;
      const searched = fields.search.map(
        (property) => `LOWER(${qualified(property)}) LIKE ${params.add(pattern)} ESCAPE '\\'`,
      );
      clauses.push(`(${searched.join(' OR ')})`);
    }
    return clauses.join(' AND ');
  };

  // Ties are broken by id, in the direction of the last key, so one index serves the whole order.
  const lastDirection = query.sort.at(-1)?.direction === 'asc' ? 'ASC' : 'DESC';
  const order = [
    ...query.sort.map((key) => `${column(key.field)} ${key.direction === 'asc' ? 'ASC' : 'DESC'}`),
    `${id} ${lastDirection}`,
  ].join(', ');

  const countParams = new SqlParams(dialect);
  const count = {
    sql: `SELECT COUNT(*) AS total FROM ${from} WHERE ${where(countParams)}`,
    params: countParams.values,
  };

  const pageParams = new SqlParams(dialect);
  // Placeholders are positional on SQLite: the WHERE's values are added before LIMIT's.
  const filtered = `FROM ${from} WHERE ${where(pageParams)} ORDER BY ${order}`;
  const limit = `LIMIT ${pageParams.add(query.per_page)} OFFSET ${pageParams.add((query.page - 1) * query.per_page)}`;
  if (sqliteSearch) {
    // The window counts every match before LIMIT, so the page's rows carry the total and the
    // matches are read once, not once for the count and again for the page.
    const ids = `SELECT ${id} AS "id", COUNT(*) OVER () AS "search_total" ${filtered} ${limit}`;
    const page = {
      sql:
        `SELECT ${selectList(repo, table)}, "page"."search_total" AS "search_total" ` +
        `FROM (${ids}) AS "page" CROSS JOIN ${table} ON ${id} = "page"."id" ORDER BY ${order}`,
      params: pageParams.values,
    };
    return { count, page, pageHasTotal: true };
  }
  const ids = `SELECT ${id} ${filtered} ${limit}`;
  const page = {
    sql: `SELECT ${selectList(repo)} FROM ${table} WHERE ${id} IN (${ids}) ORDER BY ${order}`,
    params: pageParams.values,
  };
  return { count, page, pageHasTotal: false };
}

function predicate<T extends ObjectLiteral>(
  repo: Repository<T>,
  fields: ListFields,
  column: (field: string) => string,
  condition: ListCondition,
  params: SqlParams,
): string {
  if (condition.op === 'in') {
    return `${column(condition.field)} IN (${condition.values.map((v) => params.add(v)).join(', ')})`;
  }
  const value = toDatabaseValue(
    repo,
    fields.columns[condition.field] ?? condition.field,
    condition.value,
  );
  return `${column(condition.field)} ${RANGE_SQL[condition.op]} ${params.add(value)}`;
}
