import { type ListQuery, sortText } from '@platform/contract';
import type { ObjectLiteral, Repository } from 'typeorm';
import { listFieldsFor } from './list-fields';
import { indexedSearch, ListSql } from './list-sql';
import { type CompiledSql, quoteIdentifier, Sql } from '../../database/sql';
import { isSearchTimeout } from '../../database/search-functions';
import { searchTimedOut } from './search-budget';
import { checkListCursor, encodeListCursor } from './list-cursor';
import { referenceFilters } from './reference-filters';
import {
  type ComputedFilter,
  type ListFields,
  type ListOptions,
  type ListStatements,
  type PageTotal,
  pageLimit,
  POSTGRES_SEARCH_COUNT_SETTINGS,
  POSTGRES_WALK_ROWS,
  SQLITE_SCAN_WHOLE,
  TOTAL_COLUMN,
  WINDOW_COLUMN,
} from './list-types';

export {
  type ComputedFilter,
  type ListFields,
  type ListOptions,
  type ListStatements,
  type PageTotal,
  POSTGRES_SEARCH_COUNT_SETTINGS,
  POSTGRES_WALK_ROWS,
  POSTGRES_WALK_WHOLE,
  SEARCH_COUNT_AHEAD,
  SEARCH_WALK_ROWS,
  SQLITE_SCAN_WHOLE,
  type Statement,
  TOTAL_COUNT_AHEAD,
} from './list-types';
export { indexedSearch } from './list-sql';

/**
 * What a PostgreSQL walk's first row says (POSTGRES_WALK_ROWS): the count's bound reached, or
 * every row left walked (so what it found is the exact count). Undefined: the trigram count and
 * page decide. Exported for its unit test.
 */
export function walkAnswer(row: Record<string, unknown>, cap: number): CountRow | undefined {
  const found = Number(row[TOTAL_COLUMN] ?? 0);
  if (found >= cap) return { total: cap };
  const held = row[WINDOW_COLUMN];
  return held != null && Number(held) <= POSTGRES_WALK_ROWS ? { total: found } : undefined;
}

/** A list's counted total. */
type CountRow = { total: number | string };

/**
 * The count `n` made consistent with the page the caller gets. On PostgreSQL the count and the
 * page can run on two connections, each with its own snapshot, so a write between them could
 * answer `total: 0` beside a record. Without a cursor the page's rows are the truth: a short page
 * on page 1 or with rows ends the list, so the total is the rows before it and on it. A full page
 * beside a smaller count says only that more may follow: one more than its rows, as a lower
 * bound (`raised`), so `links.next` leads on. A page past the end proves nothing and keeps the
 * count, as a cursor's page does. Exported for its unit test.
 */
export function pageBounds(
  query: ListQuery,
  n: number,
  rows: number,
): { total: number; raised: boolean } {
  if (query.after || (rows === 0 && query.page > 1)) return { total: n, raised: false };
  const through = (query.page - 1) * query.per_page + rows;
  if (rows < query.per_page) return { total: through, raised: false };
  return n < through ? { total: through + 1, raised: true } : { total: n, raised: false };
}

/**
 * One collection's list: its table and column names resolved from the entity metadata once,
 * when the owning service is built, so a request only assembles the statement text (`ListSql`)
 * and runs it (`find`).
 */
export class ListCollection<T extends ObjectLiteral> {
  /** The collection's statements, built from its names resolved once (list-sql.ts). */
  private readonly listSql: ListSql<T>;

  /**
   * The columns that follow `organization_id` in one of the table's indexes, read from the
   * database once, at the first search that could walk (SEARCH_WALK_ROWS, POSTGRES_WALK_ROWS).
   * Without such an index a walk would sort the organization's rows; the index's page sorts only
   * the matches.
   */
  private orderedColumns?: Promise<ReadonlySet<string>>;

  /**
   * The collection a contract list query describes (`contract.students.list.query`), its columns
   * derived by `listFieldsFor` (`columnOf`: the fields whose column has another name;
   * `computed`: the filters the service turns into SQL itself).
   */
  static of<T extends ObjectLiteral>(
    sql: Sql,
    repo: Repository<T>,
    listQuery: object,
    columnOf?: Readonly<Record<string, string>>,
    computed?: Readonly<Record<string, ComputedFilter>>,
  ): ListCollection<T> {
    // Reference filters that take `ext:<external_id>` are computed too, in every collection.
    const all = { ...referenceFilters(repo.metadata, listQuery), ...computed };
    const fields = listFieldsFor(repo.metadata, listQuery, columnOf, Object.keys(all));
    return new ListCollection(sql, repo, { ...fields, computed: all });
  }

  constructor(
    private readonly sql: Sql,
    private readonly repo: Repository<T>,
    fields: ListFields,
  ) {
    this.listSql = new ListSql(sql, repo, fields);
  }

  /**
   * Translates a validated list query into SQL for one organization: its total and one page.
   * The total of a tallied collection, unfiltered or with one tallied equality filter, is the sum
   * of its tally rows (exact, whatever the size); any other is a bounded count. The page is a
   * deferred join: the inner query walks the (organization_id, sort field, id) index for ids
   * only, so OFFSET skips index entries rather than whole rows, and only the page's rows are then
   * read from the table. That keeps page 300 close to page 1 in cost. The count stops at
   * `offset + per_page + totalCountAhead` rows (`searchCountAhead` for a `q` search; see
   * `PageTotal`), so neither costs more in a collection of a million than in one of ten thousand.
   * A `q` search runs under a time budget and answers 503 past it, whether it is served by the
   * trigram index (3+ characters) or scans the organization's rows (1–2 characters). A q that
   * most rows contain is served by walking the list's order instead (SEARCH_WALK_ROWS,
   * POSTGRES_WALK_ROWS).
   */
  async find(
    organizationId: string,
    query: ListQuery,
    options?: ListOptions,
  ): Promise<{ rows: T[]; total: PageTotal }>;
  /**
   * The same page, each raw row mapped by `map` (`rowMapper`: straight to the API view), so a
   * list builds no entity but the last row's, for its next cursor.
   */
  async find<R>(
    organizationId: string,
    query: ListQuery,
    options: ListOptions | undefined,
    map: (row: Record<string, unknown>) => R,
  ): Promise<{ rows: R[]; total: PageTotal }>;
  async find<R>(
    organizationId: string,
    query: ListQuery,
    options?: ListOptions,
    map?: (row: Record<string, unknown>) => R,
  ): Promise<{ rows: (T | R)[]; total: PageTotal }> {
    if (query.after) checkListCursor(organizationId, this.repo.metadata.tableName, query.after);
    const searching = this.listSql.isSearch(query);
    // A programming error: a collection with searchable fields must pass its budget.
    if (searching && !options) throw new Error('a searchable list needs ListOptions');
    const budgetMs = options?.searchTimeoutMs ?? 0;
    const scan = searching && (await this.scansWhole(organizationId, query));
    // The search budget is elapsed time, checked by searchDeadline on the system clock too.
    const { count, page, pageWithTotal, walk } = this.statements(
      organizationId,
      query,
      Date.now() + budgetMs,
      scan,
    );
    const sql = this.sql;
    const manager = this.repo.manager;
    let counted: CountRow[];
    let pageRows: Record<string, unknown>[];
    try {
      if (searching && sql.dialect === 'postgres') {
        [counted, pageRows] = await this.postgresSearch(query, { count, page, walk }, budgetMs);
      } else if (walk) {
        // SQLite runs statements one at a time anyway: count first, and when the matches run
        // past the bound (so the page is full), try the walk; a short walk proves nothing.
        counted = await sql.query<CountRow>(manager, count.text, count.params);
        const walked =
          Number(counted[0]?.total ?? 0) >= Number(count.params.cap) &&
          (await this.indexedOrders()).has(walk.sortColumn)
            ? await sql.query(manager, walk.text, walk.params)
            : [];
        pageRows =
          walked.length === pageLimit(query)
            ? walked
            : await sql.query(manager, page.text, page.params);
      } else if (searching) {
        [counted, pageRows] = await Promise.all([
          sql.query<CountRow>(manager, count.text, count.params),
          sql.query(manager, page.text, page.params),
        ]);
      } else if (pageWithTotal) {
        // Most list requests: one statement, straight to the driver (Sql.select). An empty first
        // page means an empty list; a page past the end has no row to carry the total, so then
        // the tally is read on its own.
        pageRows = await sql.select(pageWithTotal.text, pageWithTotal.params);
        counted =
          pageRows.length > 0
            ? [{ total: pageRows[0]![TOTAL_COLUMN] as number | string }]
            : query.page === 1
              ? [{ total: 0 }]
              : await sql.select<CountRow>(count.text, count.params);
      } else {
        // Straight to the driver (Sql.select), both at once.
        [counted, pageRows] = await Promise.all([
          sql.select<CountRow>(count.text, count.params),
          sql.select(page.text, page.params),
        ]);
      }
    } catch (error) {
      if (searching && isSearchTimeout(error)) throw searchTimedOut(budgetMs);
      throw error;
    }
    const raw = pageRows.slice(0, query.per_page);
    const rows = map ? raw.map(map) : raw.map((row) => this.hydrate(row));
    // Under a cursor the statement read one row past the page: it says whether a next page has any.
    const more = pageRows.length > query.per_page;
    return { rows, total: this.total(organizationId, query, count, counted, raw, more) };
  }

  /**
   * A PostgreSQL search's count and page, under the budget: from the walk when it answers
   * (`walkAnswer`, POSTGRES_WALK_ROWS), else the trigram count and the page.
   */
  private async postgresSearch(
    query: ListQuery,
    { count, page, walk }: Pick<ListStatements, 'count' | 'page' | 'walk'>,
    budgetMs: number,
  ): Promise<[CountRow[], Record<string, unknown>[]]> {
    const sql = this.sql;
    const walks = walk && (await this.indexedOrders()).has(walk.sortColumn);
    const cap = Number(count.params.cap);
    // SET LOCAL lasts until the end of this transaction, so the pooled connection goes back
    // with its usual (unlimited) timeout.
    return this.repo.manager.transaction(async (tx) => {
      await tx.query(`SET LOCAL statement_timeout = ${Math.ceil(budgetMs)}`);
      const walked = walks ? await sql.query(tx, walk.text, walk.params) : [];
      const answer = walked.length > 0 && walkAnswer(walked[0]!, cap);
      if (answer) return [[answer], walked];
      const settings = indexedSearch(query) ? POSTGRES_SEARCH_COUNT_SETTINGS : [];
      for (const setting of settings) await tx.query(`SET LOCAL ${setting} = off`);
      const total = await sql.query<{ total: number | string }>(tx, count.text, count.params);
      for (const setting of settings) await tx.query(`SET LOCAL ${setting} TO DEFAULT`);
      return [total, await sql.query(tx, page.text, page.params)];
    });
  }

  /**
   * `meta.total` and the cursor of the next page. Under a cursor a counted total is the pages
   * before it at `per_page` each and the matches counted after it: not exact, since the records
   * before the cursor are not counted again (that would cost what OFFSET does). A full page has a
   * next cursor; under a cursor only when a record follows it (`more`, see pageLimit).
   */
  private total(
    organizationId: string,
    query: ListQuery,
    count: ListStatements['count'],
    counted: CountRow[],
    page: Record<string, unknown>[],
    more: boolean,
  ): PageTotal {
    const { total: n, raised } = pageBounds(query, Number(counted[0]?.total ?? 0), page.length);
    const full = query.after ? more : page.length === query.per_page;
    // The page's last row as an entity: its sort keys, as the driver converts them, make the cursor.
    const lastRow = full ? page.at(-1) : undefined;
    const last = lastRow && this.hydrate(lastRow);
    const nextCursor =
      last &&
      encodeListCursor(organizationId, this.repo.metadata.tableName, {
        page: query.page + 1,
        sort: sortText(query.sort),
        values: this.listSql.sortKeysOf(query, last),
        id: String((last as { id?: unknown }).id),
      });
    const before = query.after && !count.tallied ? (query.page - 1) * query.per_page : 0;
    return {
      count: before + n,
      exact: !raised && (count.tallied || (!query.after && n < Number(count.params.cap))),
      ...(nextCursor && { nextCursor }),
    };
  }

  /**
   * The count and page statements of a list query (public so tests can check their plans).
   * `searchDeadline` (epoch ms) bounds a `q` search on SQLite; PostgreSQL's is statement_timeout.
   */
  statements(
    organizationId: string,
    query: ListQuery,
    searchDeadline = 0,
    scan = false,
  ): ListStatements {
    return this.listSql.statements(organizationId, query, searchDeadline, scan);
  }

  /**
   * Whether a SQLite search of 3+ characters scans the organization's rows instead of starting
   * from the database-wide trigram index: its tally says it has at most SQLITE_SCAN_WHOLE
   * (`LIST_SEARCH_SCAN_ROWS`).
   */
  private async scansWhole(organizationId: string, query: ListQuery): Promise<boolean> {
    const most = this.sql.listSearchScanRows ?? SQLITE_SCAN_WHOLE;
    if (this.sql.dialect !== 'sqlite' || most === 0 || !indexedSearch(query)) return false;
    const tally = this.listSql.tallyCount(organizationId, { ...query, conditions: [] });
    if (!tally) return false;
    const [row] = await this.sql.select<CountRow>(tally.text, tally.params);
    return Number(row?.total ?? 0) <= most;
  }

  /** See orderedColumns. */
  private indexedOrders(): Promise<ReadonlySet<string>> {
    this.orderedColumns ??= (async () => {
      const manager = this.repo.manager;
      const organization = this.repo.metadata.findColumnWithPropertyName('organizationId');
      if (this.sql.dialect === 'postgres') {
        // Each index's first two columns (indkey is 0-based); an expression's attnum is 0.
        const rows: { name: string }[] = await manager.query(
          'SELECT s.attname AS name FROM pg_index i ' +
            'JOIN pg_attribute o ON o.attrelid = i.indrelid AND o.attnum = i.indkey[0] ' +
            'JOIN pg_attribute s ON s.attrelid = i.indrelid AND s.attnum = i.indkey[1] ' +
            'WHERE i.indrelid = to_regclass($1) AND o.attname = $2 AND i.indpred IS NULL',
          [quoteIdentifier(this.repo.metadata.tableName), organization?.databaseName],
        );
        return new Set(rows.map((row) => row.name));
      }
      const indexes: { name: string }[] = await manager.query(
        `PRAGMA index_list(${quoteIdentifier(this.repo.metadata.tableName)})`,
      );
      const ordered = new Set<string>();
      for (const { name } of indexes) {
        const columns: { seqno: number; name: string }[] = await manager.query(
          `PRAGMA index_info(${quoteIdentifier(name)})`,
        );
        const [first, second] = [...columns].sort((a, b) => a.seqno - b.seqno);
        if (second && first?.name === organization?.databaseName) ordered.add(second.name);
      }
      return ordered;
    })();
    return this.orderedColumns;
  }

  /** A raw row as the entity, through the driver's own value conversion (dates, numbers). */
  private hydrate(row: Record<string, unknown>): T {
    const driver = this.repo.manager.connection.driver;
    const entity = {} as Record<string, unknown>;
    for (const column of this.listSql.selectColumns) {
      entity[column.propertyName] = driver.prepareHydratedValue(row[column.databaseName], column);
    }
    return entity as T;
  }
}

/** The count and page statements compiled for the repository's database (to check plans in tests). */
export function pageStatements<T extends ObjectLiteral>(
  repo: Repository<T>,
  organizationId: string,
  query: ListQuery,
  fields: ListFields,
  searchDeadline = 0,
): Partial<Record<'pageWithTotal' | 'every' | 'walk', CompiledSql>> &
  Record<'count' | 'page', CompiledSql> {
  const sql = new Sql(repo.manager.connection);
  const { count, page, pageWithTotal, every, walk } = new ListCollection(
    sql,
    repo,
    fields,
  ).statements(organizationId, query, searchDeadline);
  return {
    count: sql.compile(count.text, count.params),
    page: sql.compile(page.text, page.params),
    ...(pageWithTotal && { pageWithTotal: sql.compile(pageWithTotal.text, pageWithTotal.params) }),
    ...(every && { every: sql.compile(every.text, every.params) }),
    ...(walk && { walk: sql.compile(walk.text, walk.params) }),
  };
}
