import type { ListCondition, ListQuery, RangeOperator } from '@platform/contract';
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

/** How a collection's API field names map to entity properties. */
export interface ListFields {
  /** API field (as in `sort`, filters and ranges) → entity property. */
  columns: Record<string, string>;
  /** Entity properties that `q` searches. */
  search?: readonly string[];
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
 */
export async function findPage<T extends ObjectLiteral>(
  repo: Repository<T>,
  organizationId: string,
  query: ListQuery,
  fields: ListFields,
): Promise<{ rows: T[]; total: number }> {
  const { count, page } = pageStatements(repo, organizationId, query, fields);
  const [countRows, pageRows] = await Promise.all([
    repo.query<{ total: number | string }[]>(count.sql, count.params),
    repo.query<Record<string, unknown>[]>(page.sql, page.params),
  ]);
  return {
    rows: pageRows.map((row) => hydrate(repo, row)),
    total: Number(countRows[0]?.total ?? 0),
  };
}

/** The count and page statements of a list query (exported so tests can check their plans). */
export function pageStatements<T extends ObjectLiteral>(
  repo: Repository<T>,
  organizationId: string,
  query: ListQuery,
  fields: ListFields,
): { count: Statement; page: Statement } {
  const dialect = dialectOf(repo);
  const table = quoteIdentifier(repo.metadata.tableName);
  const column = (field: string): string => {
    const property = fields.columns[field];
    // The contract only lets through fields the collection declared; a miss is a programming error.
    if (!property) throw new Error(`list field '${field}' has no column mapping`);
    return quoteIdentifier(columnName(repo, property));
  };

  const where = (params: SqlParams): string => {
    const clauses = [
      `${quoteIdentifier(columnName(repo, 'organizationId'))} = ${params.add(organizationId)}`,
    ];
    for (const condition of query.conditions)
      clauses.push(predicate(repo, fields, column, condition, params));
    if (query.q !== undefined && fields.search?.length) {
      const pattern = `%${query.q.toLowerCase().replace(/[\\%_]/g, (ch) => `\\${ch}`)}%`;
      const searched = fields.search.map(
        (property) =>
          `LOWER(${quoteIdentifier(columnName(repo, property))}) LIKE ${params.add(pattern)} ESCAPE '\\'`,
      );
      clauses.push(`(${searched.join(' OR ')})`);
    }
    return clauses.join(' AND ');
  };

  // Ties are broken by id, in the direction of the last key, so one index serves the whole order.
  const lastDirection = query.sort.at(-1)?.direction === 'asc' ? 'ASC' : 'DESC';
  const order = [
    ...query.sort.map((key) => `${column(key.field)} ${key.direction === 'asc' ? 'ASC' : 'DESC'}`),
    `"id" ${lastDirection}`,
  ].join(', ');

  const countParams = new SqlParams(dialect);
  const count = {
    sql: `SELECT COUNT(*) AS total FROM ${table} WHERE ${where(countParams)}`,
    params: countParams.values,
  };

  const pageParams = new SqlParams(dialect);
  const ids =
    `SELECT "id" FROM ${table} WHERE ${where(pageParams)} ORDER BY ${order} ` +
    `LIMIT ${pageParams.add(query.per_page)} OFFSET ${pageParams.add((query.page - 1) * query.per_page)}`;
  const page = {
    sql: `SELECT ${selectList(repo)} FROM ${table} WHERE "id" IN (${ids}) ORDER BY ${order}`,
    params: pageParams.values,
  };
  return { count, page };
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
