import type { ListQuery, RangeOperator } from '@platform/contract';
import { Brackets, type ObjectLiteral, type Repository, type SelectQueryBuilder } from 'typeorm';

/** How a collection's API field names map to entity properties. */
export interface ListFields {
  /** API field (as in `sort`, filters and ranges) → entity property. */
  columns: Record<string, string>;
  /** Entity properties that `q` searches. */
  search?: readonly string[];
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
  const { count, page } = pageQueries(repo, organizationId, query, fields);
  const [countRow, rows] = await Promise.all([
    count.getRawOne<{ total: number | string }>(),
    page.getMany(),
  ]);
  return { rows, total: Number(countRow?.total ?? 0) };
}

/** The two queries of a page, unexecuted (exported so tests can check their query plans). */
export function pageQueries<T extends ObjectLiteral>(
  repo: Repository<T>,
  organizationId: string,
  query: ListQuery,
  fields: ListFields,
): { count: SelectQueryBuilder<T>; page: SelectQueryBuilder<T> } {
  const filtered = repo
    .createQueryBuilder('t')
    .where('t.organizationId = :organizationId', { organizationId });
  applyConditions(repo, filtered, query, fields);

  const ids = orderBy(filtered.clone().select('t.id'), 't', query, fields)
    .offset((query.page - 1) * query.per_page)
    .limit(query.per_page);
  const page = orderBy(
    repo
      .createQueryBuilder('p')
      .where(`p.id IN (${ids.getQuery()})`)
      .setParameters(ids.getParameters()),
    'p',
    query,
    fields,
  );
  return { count: filtered.clone().select('COUNT(*)', 'total'), page };
}

function column(fields: ListFields, field: string): string {
  const property = fields.columns[field];
  // The contract only lets through fields the collection declared; a miss is a programming error.
  if (!property) throw new Error(`list field '${field}' has no column mapping`);
  return property;
}

function applyConditions<T extends ObjectLiteral>(
  repo: Repository<T>,
  qb: SelectQueryBuilder<T>,
  query: ListQuery,
  fields: ListFields,
): void {
  query.conditions.forEach((condition, i) => {
    const property = column(fields, condition.field);
    const param = `c${i}`;
    if (condition.op === 'in') {
      qb.andWhere(`t.${property} IN (:...${param})`, { [param]: condition.values });
    } else {
      qb.andWhere(`t.${property} ${RANGE_SQL[condition.op]} :${param}`, {
        [param]: toDatabaseValue(repo, property, condition.value),
      });
    }
  });
  if (query.q !== undefined && fields.search?.length) {
    const pattern = `%${query.q.toLowerCase().replace(/[\\%_]/g, (ch) => `\\${ch}`)}%`;
    qb.andWhere(
      new Brackets((or) => {
        for (const property of fields.search ?? []) {
          or.orWhere(`LOWER(t.${property}) LIKE :q ESCAPE '\\'`, { q: pattern });
        }
      }),
    );
  }
}

/** Dates must be bound the way the driver stores them (UTC text on SQLite, timestamptz on PostgreSQL). */
function toDatabaseValue<T extends ObjectLiteral>(
  repo: Repository<T>,
  property: string,
  value: unknown,
): unknown {
  const columnMetadata = repo.metadata.findColumnWithPropertyName(property);
  if (!columnMetadata) return value;
  return repo.manager.connection.driver.preparePersistentValue(value, columnMetadata) as unknown;
}

function orderBy<T extends ObjectLiteral>(
  qb: SelectQueryBuilder<T>,
  alias: string,
  query: ListQuery,
  fields: ListFields,
): SelectQueryBuilder<T> {
  let last: 'ASC' | 'DESC' = 'DESC';
  query.sort.forEach((key, i) => {
    last = key.direction === 'asc' ? 'ASC' : 'DESC';
    const expression = `${alias}.${column(fields, key.field)}`;
    if (i === 0) qb.orderBy(expression, last);
    else qb.addOrderBy(expression, last);
  });
  // Ties are broken by id, in the direction of the last key so one index serves the whole order.
  return qb.addOrderBy(`${alias}.id`, last);
}
