import {
  type ListCondition,
  type ListQuery,
  type RangeOperator,
  SEARCH_LENGTH,
} from '@platform/contract';
import type { ObjectLiteral, Repository } from 'typeorm';
import { listFieldsFor } from './list-fields';
import { type CompiledSql, quoteIdentifier, Sql, type SqlParams } from '../../database/sql';
import {
  isSearchTimeout,
  SEARCH_DEADLINE_FUNCTION,
  SEARCH_FOLD_FUNCTION,
} from '../../database/search-functions';
import { searchTimedOut } from './search-budget';
import { LIST_TALLIES, talliedFields, WHOLE_COLLECTION } from '../../database/list-tallies';

/**
 * A filter with no column of its own, such as a state derived from several columns: the service
 * turns its values (validated by the contract) into one SQL predicate, at each request. `column`
 * qualifies an entity property's column; `bind` binds a value for a property's column and
 * returns its placeholder.
 */
export type ComputedFilter = (
  values: readonly (string | number)[],
  sql: { column(property: string): string; bind(property: string, value: unknown): string },
) => string;

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
  /**
   * Database columns whose equality filters' totals are tallied (`tally` of the contract's list
   * query); undefined: the collection's totals are tallied as database/list-tallies.ts lists.
   */
  tally?: readonly string[];
  /** API field → its predicate, for the equality filters that have no column (ComputedFilter). */
  computed?: Readonly<Record<string, ComputedFilter>>;
}

export interface ListOptions {
  /** How long a `q` search may take (`SEARCH_TIMEOUT`); past it the list is a 503. */
  searchTimeoutMs: number;
}

/** A statement with named parameters, compiled by `Sql` for the dialect. */
export interface Statement {
  text: string;
  params: SqlParams;
}

/**
 * The planner settings a PostgreSQL search of 3+ characters counts under (the page runs under
 * the defaults). Its count reads only `per_page + SEARCH_COUNT_AHEAD` matches, so the planner
 * judges a scan that stops at LIMIT (sequential, or along an organization index, filtering every
 * row) cheaper than the trigram indexes: a bet on where the matches lie that reads every row of
 * the table or the organization when they are rare there or come late. Without those, the count
 * is the trigram indexes' bitmap (~20-30 ms for a surname's 20,000 matches at a million rows,
 * less than the bet's ~25-33 ms when it wins) and costs what the matches do, whatever the size.
 * Public so tests explain the plans the server runs.
 */
export const POSTGRES_SEARCH_COUNT_SETTINGS = ['enable_seqscan', 'enable_indexscan'] as const;

/**
 * A list's statements: its total (the bounded count, or its tallies' sum, exact), the page, and on
 * SQLite a search's walk (see find).
 */
export interface ListStatements {
  count: Statement & { tallied: boolean };
  page: Statement;
  /**
   * A tallied total and the page in one statement (see TOTAL_COLUMN): the page's rows each carry
   * the total. Set when the total is tallied.
   */
  pageWithTotal?: Statement;
  /**
   * Every matching row in the list's order, unpaged, read straight from the (organization, sort
   * field, id) index: what an export streams. Set when the query does not search. (The page's
   * deferred join would first collect every id, then sort the rows again.)
   */
  every?: Statement;
  /** SEARCH_WALK_ROWS: the page taken by walking the list's order; valid only when full. */
  walk?: Statement & {
    /** The sort column (database name): the walk is only tried when an index serves its order. */
    sortColumn: string;
  };
}

/**
 * How far past the requested page a list counts: `meta.total` is exact when the collection ends
 * within `offset + per_page + TOTAL_COUNT_AHEAD` rows, else it is that many (a lower bound, with
 * `total_exact: false`). The bound grows with the page, not the collection, so a count costs at
 * most about what the page's own OFFSET walk does, and `total_pages > page` while rows remain.
 * 10,000 is a few milliseconds of index entries, and exact for most organizations' collections.
 */
export const TOTAL_COUNT_AHEAD = 10_000;

/**
 * How far past the page a `q` search counts (never further than a list does). A search's matches
 * are found through the trigram index and then read row by row, so counting 10,000 of a common
 * surname's 20,000 matches cost more than 100 ms at a million students; 200 keeps the count to
 * about what the page costs, still exact for most searches, and `total_pages > page` while
 * matches remain.
 */
export const SEARCH_COUNT_AHEAD = 200;

/**
 * On SQLite, a search whose matches run past its count bound takes its page by walking the
 * organization's rows in the list's order (its `(organization_id, sort field, id)` index) and
 * testing each for the substring, as PostgreSQL's planner does, rather than reading and sorting
 * every match the trigram index returns (20,000 joins for a common surname at a million students,
 * ~250 ms). At most this many rows are walked: when they hold fewer than the page needs (sparse
 * matches, deep pages), the page is taken from the index as before. The same rows, the same order.
 */
export const SEARCH_WALK_ROWS = 4_000;

/** `meta.total` and whether it is exact (see TOTAL_COUNT_AHEAD). */
export interface PageTotal {
  count: number;
  exact: boolean;
}

/**
 * The column that carries a tallied total on each of the page's rows (ListStatements'
 * `pageWithTotal`): one statement and one round trip per list request instead of two. No entity
 * column starts with `__`.
 */
const TOTAL_COLUMN = '__total';

const RANGE_SQL: Record<RangeOperator, string> = { gte: '>=', gt: '>', lte: '<=', lt: '<' };

/**
 * One collection's list: its table and column names resolved from the entity metadata once,
 * when the owning service is built, so a request only assembles the statement text.
 */
export class ListCollection<T extends ObjectLiteral> {
  private readonly tableName: string;
  private readonly table: string;
  /** API field → qualified column and the entity property (for the driver's value conversion). */
  private readonly columns: ReadonlyMap<string, { sql: string; property: string }>;
  private readonly search: readonly string[];
  private readonly computed: Readonly<Record<string, ComputedFilter>>;
  private readonly organization: string;
  private readonly selectColumns: Repository<T>['metadata']['columns'];
  private readonly select: string;
  private readonly selectQualified: string;
  /**
   * API field → column, for the equality filters whose totals are tallied (database/list-tallies);
   * undefined when the collection's totals are always counted.
   */
  private readonly tallied?: ReadonlyMap<string, string>;
  private readonly tallyText =
    `SELECT COALESCE(SUM(n), 0) AS total FROM ${quoteIdentifier(LIST_TALLIES)} ` +
    'WHERE organization_id = :organizationId AND collection = :collection ' +
    'AND field = :field AND value IN (:...values)';

  /**
   * SQLite: the columns that follow `organization_id` in one of the table's indexes, read from the
   * database once, at the first search that could walk (SEARCH_WALK_ROWS). Without such an index
   * a walk would sort the organization's rows; the index's page sorts only the matches.
   */
  private orderedColumns?: Promise<ReadonlySet<string>>;

  /** Rows counted past the requested page (`LIST_TOTAL_COUNT_AHEAD`, see TOTAL_COUNT_AHEAD). */
  private readonly totalCountAhead: number;
  /** Matches a search counts past the page (`LIST_SEARCH_COUNT_AHEAD`, see SEARCH_COUNT_AHEAD). */
  private readonly searchCountAhead: number;

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
    const fields = listFieldsFor(repo.metadata, listQuery, columnOf, Object.keys(computed ?? {}));
    return new ListCollection(sql, repo, { ...fields, ...(computed && { computed }) });
  }

  constructor(
    private readonly sql: Sql,
    private readonly repo: Repository<T>,
    fields: ListFields,
  ) {
    this.totalCountAhead = sql.listTotalCountAhead ?? TOTAL_COUNT_AHEAD;
    this.searchCountAhead = Math.min(
      this.totalCountAhead,
      sql.listSearchCountAhead ?? SEARCH_COUNT_AHEAD,
    );
    const target = repo.metadata.target;
    this.tableName = repo.metadata.tableName;
    this.table = sql.table(target);
    // Qualified, because a SQLite search joins the search index, whose columns share the names.
    const qualified = (property: string) => `${this.table}.${sql.column(target, property)}`;
    this.columns = new Map(
      Object.entries(fields.columns).map(([field, property]) => [
        field,
        { sql: qualified(property), property },
      ]),
    );
    this.search = (fields.search ?? []).map(qualified);
    this.computed = fields.computed ?? {};
    this.organization = qualified('organizationId');
    this.selectColumns = repo.metadata.columns;
    this.select = this.selectColumns.map((c) => quoteIdentifier(c.databaseName)).join(', ');
    this.selectQualified = this.selectColumns
      .map((c) => `${this.table}.${quoteIdentifier(c.databaseName)}`)
      .join(', ');
    const tallied = fields.tally ?? talliedFields(this.tableName);
    if (tallied) {
      const column = (property: string) =>
        repo.metadata.findColumnWithPropertyName(property)?.databaseName ?? '';
      this.tallied = new Map(
        Object.entries(fields.columns)
          .map(([field, property]): [string, string] => [field, column(property)])
          .filter(([, name]) => tallied.includes(name)),
      );
    }
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
   * trigram index (3+ characters) or scans the organization's rows (1–2 characters).
   */
  async find(
    organizationId: string,
    query: ListQuery,
    options?: ListOptions,
  ): Promise<{ rows: T[]; total: PageTotal }> {
    const searching = this.isSearch(query);
    // A programming error: a collection with searchable fields must pass its budget.
    if (searching && !options) throw new Error('a searchable list needs ListOptions');
    const budgetMs = options?.searchTimeoutMs ?? 0;
    // The search budget is elapsed time, checked by searchDeadline on the system clock too.
    const { count, page, pageWithTotal, walk } = this.statements(
      organizationId,
      query,
      Date.now() + budgetMs,
    );
    const sql = this.sql;
    const manager = this.repo.manager;
    type CountRow = { total: number | string };
    let counted: CountRow[];
    let pageRows: Record<string, unknown>[];
    try {
      if (searching && sql.dialect === 'postgres') {
        // SET LOCAL lasts until the end of this transaction, so the pooled connection goes back
        // with its usual (unlimited) timeout.
        [counted, pageRows] = await manager.transaction(async (tx) => {
          await tx.query(`SET LOCAL statement_timeout = ${Math.ceil(budgetMs)}`);
          const settings = indexedSearch(query) ? POSTGRES_SEARCH_COUNT_SETTINGS : [];
          for (const setting of settings) await tx.query(`SET LOCAL ${setting} = off`);
          const total = await sql.query<CountRow>(tx, count.text, count.params);
          for (const setting of settings) await tx.query(`SET LOCAL ${setting} TO DEFAULT`);
          return [total, await sql.query(tx, page.text, page.params)];
        });
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
          walked.length === query.per_page
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
    const n = Number(counted[0]?.total ?? 0);
    return {
      rows: pageRows.map((row) => this.hydrate(row)),
      total: { count: n, exact: count.tallied || n < Number(count.params.cap) },
    };
  }

  /**
   * The count and page statements of a list query (public so tests can check their plans).
   * `searchDeadline` (epoch ms) bounds a `q` search on SQLite; PostgreSQL's is statement_timeout.
   */
  statements(organizationId: string, query: ListQuery, searchDeadline = 0): ListStatements {
    const { table } = this;
    const column = (field: string): string => {
      const mapped = this.columns.get(field);
      // The contract only lets through fields the collection declared; a miss is a programming error.
      if (!mapped) throw new Error(`list field '${field}' has no column mapping`);
      return mapped.sql;
    };
    const id = `${table}."id"`;
    const searching = this.isSearch(query);

    // A SQLite search of 3+ characters starts from the trigram index, so it reads only rows that
    // contain q: the CROSS JOINs fix that order (SQLite never reorders them), whatever the
    // organization's size. A shorter q has no trigram to look up: it scans the organization's rows.
    const search = quoteIdentifier(`${this.tableName}_search`);
    const keys = quoteIdentifier(`${this.tableName}_search_keys`);
    const sqliteSearch = this.sql.dialect === 'sqlite' && searching;
    const indexed = sqliteSearch && indexedSearch(query);
    const scanned = sqliteSearch && !indexed;
    const from = indexed
      ? `${search} CROSS JOIN ${keys} ON ${keys}."key" = ${search}."rowid" CROSS JOIN ${table} ON ${id} = ${keys}."id"`
      : table;

    const params: Record<string, unknown> = { organizationId };
    const clauses: string[] = [];
    if (indexed) {
      params.match = ftsPhrase(query.q ?? '');
      params.deadline = searchDeadline;
      clauses.push(
        `${search} MATCH :match`,
        `${SEARCH_DEADLINE_FUNCTION}(:deadline, ${search}."rowid")`,
      );
    }
    clauses.push(`${this.organization} = :organizationId`);
    if (scanned) {
      // Called for every row of the organization the scan reads, matching or not: it only needs
      // the id, so SQLite evaluates it before the searched columns are read.
      params.deadline = searchDeadline;
      clauses.push(`${SEARCH_DEADLINE_FUNCTION}(:deadline, ${id})`);
    }
    // The organization and the query's filters (without q), also the walk's (SEARCH_WALK_ROWS).
    const filters = [
      `${this.organization} = :organizationId`,
      ...query.conditions.map((condition, index) =>
        this.predicate(column, condition, `c${index}`, params),
      ),
    ];
    clauses.push(...filters.slice(1));
    if (scanned) {
      // SQLite's LOWER() folds ASCII only; the fold function folds as the trigram index does
      // (ÉMILE matches é), and instr() takes `%` and `_` literally.
      params.needle = (query.q ?? '').toLowerCase();
      const searched = this.search.map(
        (qualified) => `instr(${SEARCH_FOLD_FUNCTION}(${qualified}), :needle) > 0`,
      );
      clauses.push(`(${searched.join(' OR ')})`);
    } else if (!indexed && searching) {
      // PostgreSQL: each `lower(column)` has a pg_trgm GIN index that serves this LIKE from 3
      // characters on; a shorter q is read from the organization's rows, under statement_timeout.
      params.pattern = `%${(query.q ?? '').toLowerCase().replace(/[\\%_]/g, (ch) => `\\${ch}`)}%`;
      const searched = this.search.map(
        (qualified) => `LOWER(${qualified}) LIKE :pattern ESCAPE '\\'`,
      );
      clauses.push(`(${searched.join(' OR ')})`);
    }
    const where = clauses.join(' AND ');

    // Ties are broken by id, in the direction of the last key, so one index serves the whole order.
    const lastDirection = query.sort.at(-1)?.direction === 'asc' ? 'ASC' : 'DESC';
    const order = [
      ...query.sort.map(
        (key) => `${column(key.field)} ${key.direction === 'asc' ? 'ASC' : 'DESC'}`,
      ),
      `${id} ${lastDirection}`,
    ].join(', ');

    const offset = (query.page - 1) * query.per_page;
    // The count reads at most `cap` matches: past that, the total is a lower bound (PageTotal).
    // A search counts less far past the page than a list (SEARCH_COUNT_AHEAD).
    const ahead = searching ? this.searchCountAhead : this.totalCountAhead;
    const count = (!searching && this.tallyCount(organizationId, query)) || {
      text: `SELECT COUNT(*) AS total FROM (SELECT 1 FROM ${from} WHERE ${where} LIMIT :cap) AS "counted"`,
      params: { ...params, cap: offset + query.per_page + ahead },
      tallied: false,
    };
    const pageParams: Record<string, unknown> = { ...params, limit: query.per_page, offset };
    const filtered = `FROM ${from} WHERE ${where} ORDER BY ${order} LIMIT :limit OFFSET :offset`;
    if (sqliteSearch) {
      // The ids come from the search's joins, which start from the trigram index; the page's
      // rows are then read by id.
      const byId = (ids: string) =>
        `SELECT ${this.selectQualified} FROM (${ids}) AS "page" ` +
        `CROSS JOIN ${table} ON ${id} = "page"."id" ORDER BY ${order}`;
      const page = { text: byId(`SELECT ${id} AS "id" ${filtered}`), params: pageParams };
      if (!indexed || query.sort.length !== 1) return { count, page };
      // SEARCH_WALK_ROWS: the first rows of the list's own order (an index walk, one sort key),
      // each tested for q as the short-q scan does; the outer ORDER BY repeats the inner one, so
      // SQLite reads the walk in order and stops at the page instead of sorting the window.
      const [key] = query.sort;
      const dir = key?.direction === 'asc' ? 'ASC' : 'DESC';
      const searched = this.search.map((qualified, i) => `${qualified} AS "q${i}"`);
      const tested = this.search.map(
        (_, i) => `instr(${SEARCH_FOLD_FUNCTION}("w"."q${i}"), :needle) > 0`,
      );
      const window =
        `SELECT ${id} AS "id", ${column(key?.field ?? 'created_at')} AS "s", ${searched.join(', ')} ` +
        `FROM ${table} WHERE ${filters.join(' AND ')} ORDER BY ${order} LIMIT :window`;
      const sortProperty = this.columns.get(key?.field ?? 'created_at')?.property ?? 'createdAt';
      const walk = {
        sortColumn: this.repo.metadata.findColumnWithPropertyName(sortProperty)?.databaseName ?? '',
        text: byId(
          `SELECT "w"."id" AS "id" FROM (${window}) AS "w" ` +
            `WHERE ${SEARCH_DEADLINE_FUNCTION}(:deadline, "w"."id") AND (${tested.join(' OR ')}) ` +
            `ORDER BY "w"."s" ${dir}, "w"."id" ${dir} LIMIT :limit OFFSET :offset`,
        ),
        params: {
          organizationId,
          ...Object.fromEntries(Object.entries(params).filter(([k]) => /^c\d+(?:_\d+)?$/.test(k))),
          needle: (query.q ?? '').toLowerCase(),
          deadline: searchDeadline,
          window: SEARCH_WALK_ROWS,
          limit: query.per_page,
          offset,
        },
      };
      return { count, page, walk };
    }
    const rows = `FROM ${table} WHERE ${id} IN (SELECT ${id} ${filtered}) ORDER BY ${order}`;
    const page = { text: `SELECT ${this.select} ${rows}`, params: pageParams };
    const every = searching
      ? undefined
      : { text: `SELECT ${this.select} FROM ${from} WHERE ${where} ORDER BY ${order}`, params };
    if (!count.tallied) return { count, page, ...(every && { every }) };
    // The tally is an uncorrelated subquery, read once per statement (an InitPlan on PostgreSQL).
    // One set of parameters: a name both use must mean the same value (a programming error).
    for (const [name, value] of Object.entries(count.params)) {
      if (name in pageParams && pageParams[name] !== value)
        throw new Error(`list parameter '${name}' means two things in one statement`);
    }
    const pageWithTotal = {
      text: `SELECT (${count.text}) AS ${quoteIdentifier(TOTAL_COLUMN)}, ${this.select} ${rows}`,
      params: { ...count.params, ...pageParams },
    };
    return { count, page, pageWithTotal, ...(every && { every }) };
  }

  /**
   * The total read from the collection's tallies: unfiltered, or one equality filter on a tallied
   * field (its values' tallies summed). Undefined when the query needs a count.
   */
  private tallyCount(
    organizationId: string,
    query: ListQuery,
  ): ListStatements['count'] | undefined {
    if (!this.tallied) return undefined;
    const [condition, ...more] = query.conditions;
    let key: { field: string; values: string[] };
    if (!condition) key = { field: WHOLE_COLLECTION.field, values: [WHOLE_COLLECTION.value] };
    else if (more.length || condition.op !== 'in') return undefined;
    else {
      const field = this.tallied.get(condition.field);
      if (!field) return undefined;
      // One tally row per value: a value given twice is counted once, as IN reads it.
      key = { field, values: [...new Set(condition.values.map(String))] };
    }
    return {
      text: this.tallyText,
      params: { organizationId, collection: this.tableName, ...key },
      tallied: true,
    };
  }

  /** See orderedColumns (SQLite only). */
  private indexedOrders(): Promise<ReadonlySet<string>> {
    this.orderedColumns ??= (async () => {
      const manager = this.repo.manager;
      const organization = this.repo.metadata.findColumnWithPropertyName('organizationId');
      const indexes: { name: string }[] = await manager.query(
        `PRAGMA index_list(${quoteIdentifier(this.tableName)})`,
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

  private isSearch(query: ListQuery): boolean {
    return query.q !== undefined && this.search.length > 0;
  }

  private predicate(
    column: (field: string) => string,
    condition: ListCondition,
    name: string,
    params: Record<string, unknown>,
  ): string {
    const computed = this.computed[condition.field];
    if (computed && condition.op === 'in') {
      // Its parameters are named after the condition's (`c0_0`, …), which the walk copies too.
      let bound = 0;
      const target = this.repo.metadata.target;
      const predicate = computed(condition.values, {
        column: (property) => `${this.table}.${this.sql.column(target, property)}`,
        bind: (property, value) => {
          const param = `${name}_${bound++}`;
          params[param] = this.sql.bind(target, property, value);
          return `:${param}`;
        },
      });
      return `(${predicate})`;
    }
    if (condition.op === 'in') {
      params[name] = condition.values;
      return `${column(condition.field)} IN (:...${name})`;
    }
    const property = this.columns.get(condition.field)?.property ?? condition.field;
    params[name] = this.sql.bind(this.repo.metadata.target, property, condition.value);
    return `${column(condition.field)} ${RANGE_SQL[condition.op]} :${name}`;
  }

  /** A raw row as the entity, through the driver's own value conversion (dates, numbers). */
  private hydrate(row: Record<string, unknown>): T {
    const driver = this.repo.manager.connection.driver;
    const entity = {} as Record<string, unknown>;
    for (const column of this.selectColumns) {
      entity[column.propertyName] = driver.prepareHydratedValue(row[column.databaseName], column);
    }
    return entity as T;
  }
}

/** A `q` long enough for the trigram indexes (SEARCH_LENGTH.indexed code points). */
export function indexedSearch(query: ListQuery): boolean {
  return [...(query.q ?? '')].length >= SEARCH_LENGTH.indexed;
}

/** An FTS5 query that matches `q` as one phrase: with the trigram tokenizer, as a substring. */
function ftsPhrase(q: string): string {
  return `"${q.replace(/"/g, '""')}"`;
}

/** The count and page statements compiled for the repository's database (to check plans in tests). */
export function pageStatements<T extends ObjectLiteral>(
  repo: Repository<T>,
  organizationId: string,
  query: ListQuery,
  fields: ListFields,
  searchDeadline = 0,
): { count: CompiledSql; page: CompiledSql; pageWithTotal?: CompiledSql; every?: CompiledSql } {
  const sql = new Sql(repo.manager.connection);
  const { count, page, pageWithTotal, every } = new ListCollection(sql, repo, fields).statements(
    organizationId,
    query,
    searchDeadline,
  );
  return {
    count: sql.compile(count.text, count.params),
    page: sql.compile(page.text, page.params),
    ...(pageWithTotal && { pageWithTotal: sql.compile(pageWithTotal.text, pageWithTotal.params) }),
    ...(every && { every: sql.compile(every.text, every.params) }),
  };
}
