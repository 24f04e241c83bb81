/**
 * A collection's list as SQL: the count, page, walk and export statements of a list query, built
 * by clause (FROM and WHERE, ORDER BY, the page, the tallied total) from the names resolved once,
 * when the owning service is built. `ListCollection` (find-page.ts) runs them.
 */
import {
  type CursorValue,
  type ListCondition,
  type ListQuery,
  type RangeOperator,
  SEARCH_LENGTH,
} from '@platform/contract';
import type { ObjectLiteral, Repository } from 'typeorm';
import { LIST_TALLIES, talliedFields, WHOLE_COLLECTION } from '../../database/list-tallies';
import { SEARCH_DEADLINE_FUNCTION, SEARCH_FOLD_FUNCTION } from '../../database/search-functions';
import { quoteIdentifier, type Sql } from '../../database/sql';
import { cursorKey, cursorValue } from './list-cursor';
import {
  type ComputedFilter,
  type ListClauses,
  type ListFields,
  type ListStatements,
  pageLimit,
  POSTGRES_WALK_PROBE,
  POSTGRES_WALK_ROWS,
  POSTGRES_WALK_WHOLE,
  WINDOW_COLUMN,
  SEARCH_COUNT_AHEAD,
  SEARCH_WALK_ROWS,
  TOTAL_COLUMN,
  TOTAL_COUNT_AHEAD,
} from './list-types';

const RANGE_SQL: Record<RangeOperator, string> = { gte: '>=', gt: '>', lte: '<=', lt: '<' };

/** The statements of one collection's list queries (see ListCollection). */
export class ListSql<T extends ObjectLiteral> {
  private readonly tableName: string;
  private readonly table: string;
  /** API field → qualified column and the entity property (for the driver's value conversion). */
  private readonly columns: ReadonlyMap<string, { sql: string; property: string }>;
  private readonly search: readonly string[];
  private readonly computed: Readonly<Record<string, ComputedFilter>>;
  private readonly organization: string;
  readonly selectColumns: Repository<T>['metadata']['columns'];
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

  /** Rows counted past the requested page (`LIST_TOTAL_COUNT_AHEAD`, see TOTAL_COUNT_AHEAD). */
  private readonly totalCountAhead: number;
  /** Matches a search counts past the page (`LIST_SEARCH_COUNT_AHEAD`, see SEARCH_COUNT_AHEAD). */
  private readonly searchCountAhead: number;

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
   * The count and page statements of a list query (`ListCollection.statements`).
   * `searchDeadline` (epoch ms) bounds a `q` search on SQLite; PostgreSQL's is statement_timeout.
   * `scan`: a SQLite search scans the organization's rows (SQLITE_SCAN_WHOLE).
   */
  statements(
    organizationId: string,
    query: ListQuery,
    searchDeadline = 0,
    scan = false,
  ): ListStatements {
    const { table } = this;
    const id = `${table}."id"`;
    const searching = this.isSearch(query);
    const clauses = this.clauses(organizationId, query, searchDeadline, scan);
    const { from, where, params } = clauses;
    const order = this.order(query);

    // A cursor's page starts after its row (the keyset predicate in clauses), not at an offset.
    const offset = query.after ? 0 : (query.page - 1) * query.per_page;
    // The count reads at most `cap` matches: past that, the total is a lower bound (PageTotal).
    // A search counts less far past the page than a list (SEARCH_COUNT_AHEAD).
    const ahead = searching ? this.searchCountAhead : this.totalCountAhead;
    const count = (!searching && this.tallyCount(organizationId, query)) || {
      text: `SELECT COUNT(*) AS total FROM (SELECT 1 FROM ${from} WHERE ${where} LIMIT :cap) AS "counted"`,
      params: { ...params, cap: offset + query.per_page + ahead },
      tallied: false,
    };
    const pageParams: Record<string, unknown> = { ...params, limit: pageLimit(query), offset };
    const filtered = `FROM ${from} WHERE ${where} ORDER BY ${order} LIMIT :limit OFFSET :offset`;
    if (clauses.sqliteSearch) {
      // The ids come from the search's joins, which start from the trigram index; the page's
      // rows are then read by id.
      const page = {
        text: this.byId(`SELECT ${id} AS "id" ${filtered}`, order),
        params: pageParams,
      };
      if (!clauses.indexed || query.sort.length !== 1) return { count, page };
      return {
        count,
        page,
        walk: this.walk(organizationId, query, searchDeadline, clauses, order),
      };
    }
    const rows = `FROM ${table} WHERE ${id} IN (SELECT ${id} ${filtered}) ORDER BY ${order}`;
    const page = { text: `SELECT ${this.select} ${rows}`, params: pageParams };
    const cap = Number(count.params.cap);
    if (searching && indexedSearch(query) && query.sort.length === 1 && cap < POSTGRES_WALK_ROWS)
      return {
        count,
        page,
        walk: this.postgresWalk(query, clauses, order, { ...pageParams, cap }),
      };
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

  /** An API field's qualified column. */
  private column(field: string): string {
    const mapped = this.columns.get(field);
    // The contract only lets through fields the collection declared; a miss is a programming error.
    if (!mapped) throw new Error(`list field '${field}' has no column mapping`);
    return mapped.sql;
  }

  /** The FROM and WHERE of a list query, and their parameters (see statements). */
  private clauses(
    organizationId: string,
    query: ListQuery,
    searchDeadline: number,
    scan: boolean,
  ): ListClauses {
    const { table } = this;
    const id = `${table}."id"`;
    const searching = this.isSearch(query);

    // A SQLite search of 3+ characters starts from the trigram index, so it reads only rows that
    // contain q: the CROSS JOINs fix that order (SQLite never reorders them), whatever the
    // organization's size. A shorter q has no trigram to look up: it scans the organization's
    // rows, as a small organization's search does (`scan`).
    const search = quoteIdentifier(`${this.tableName}_search`);
    const keys = quoteIdentifier(`${this.tableName}_search_keys`);
    const sqliteSearch = this.sql.dialect === 'sqlite' && searching;
    const indexed = sqliteSearch && indexedSearch(query) && !scan;
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
    if (scanned && !scan) {
      // Called for every row of the organization the scan reads, matching or not: it only needs
      // the id, so SQLite evaluates it before the searched columns are read. A small
      // organization's scan (`scan`, at most SQLITE_SCAN_WHOLE rows) needs no deadline.
      params.deadline = searchDeadline;
      clauses.push(`${SEARCH_DEADLINE_FUNCTION}(:deadline, ${id})`);
    }
    // The organization and the query's filters (without q), also the walk's (SEARCH_WALK_ROWS).
    const filters = [
      `${this.organization} = :organizationId`,
      ...query.conditions.map((condition, index) => this.predicate(condition, `c${index}`, params)),
      ...(query.after ? [this.keyset(query, params)] : []),
    ];
    clauses.push(...filters.slice(1));
    if (scanned) {
      // SQLite's LOWER() folds ASCII only; the fold function folds as the trigram index does
      // (ÉMILE matches é), and instr() takes `%` and `_` literally. A value of printable ASCII
      // alone is folded by LOWER() in SQLite itself: a call into JavaScript costs ~1 µs a row.
      params.needle = (query.q ?? '').toLowerCase();
      const searched = this.search.map(
        (c) =>
          `(CASE WHEN ${c} GLOB '*[^ -~]*' THEN instr(${SEARCH_FOLD_FUNCTION}(${c}), :needle) ` +
          `ELSE instr(LOWER(${c}), :needle) END) > 0`,
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
    return { from, where: clauses.join(' AND '), filters, params, sqliteSearch, indexed };
  }

  /** The ORDER BY of a list query. */
  private order(query: ListQuery): string {
    // Ties are broken by id, in the direction of the last key, so one index serves the whole order.
    const lastDirection = query.sort.at(-1)?.direction === 'asc' ? 'ASC' : 'DESC';
    return [
      ...query.sort.map(
        (key) => `${this.column(key.field)} ${key.direction === 'asc' ? 'ASC' : 'DESC'}`,
      ),
      `${this.table}."id" ${lastDirection}`,
    ].join(', ');
  }

  /**
   * A cursor's keyset predicate: the rows after the cursor's row in the list's order (its sort
   * keys, then id), as one OR per key: `k1 after v1 OR (k1 = v1 AND k2 after v2) OR …`. NULLs sort
   * first on SQLite and last on PostgreSQL, as the ORDER BY reads them. A leading `k1 >= v1` (or
   * `<=`), implied by the OR wherever no NULL can follow v1, lets the (organization_id, k1, id)
   * index start at the cursor, so the last page costs what the first does.
   */
  private keyset(query: ListQuery, params: Record<string, unknown>): string {
    const after = query.after!;
    const lastDesc = query.sort.at(-1)?.direction !== 'asc';
    const keys = [
      ...query.sort.map((key) => ({ field: key.field, desc: key.direction === 'desc' })),
      { field: 'id', desc: lastDesc },
    ];
    const values = [...after.values, after.id];
    const nullsLargest = this.sql.dialect === 'postgres';
    const target = this.repo.metadata.target;
    const terms = keys.map((key, i): { equal: string; later?: string; bound?: string } => {
      const property = key.field === 'id' ? 'id' : (this.columns.get(key.field)?.property ?? '');
      const column = key.field === 'id' ? `${this.table}."id"` : this.column(key.field);
      const metadata = this.repo.metadata.findColumnWithPropertyName(property);
      const value = cursorKey(values[i] ?? null, metadata);
      const nullable = metadata?.isNullable === true;
      // Whether NULLs come after every value in this key's direction.
      const nullsAfter = nullsLargest !== key.desc;
      if (value === null)
        return {
          equal: `${column} IS NULL`,
          later: nullsAfter ? undefined : `${column} IS NOT NULL`,
        };
      params[`k${i}`] = this.sql.bind(target, property, value);
      const op = key.desc ? '<' : '>';
      const strictly = `${column} ${op} :k${i}`;
      return {
        equal: `${column} = :k${i}`,
        later: nullable && nullsAfter ? `(${strictly} OR ${column} IS NULL)` : strictly,
        bound: nullable && nullsAfter ? undefined : `${column} ${op}= :k${i}`,
      };
    });
    const branches = terms.flatMap((term, i) =>
      term.later === undefined
        ? []
        : [[...terms.slice(0, i).map((t) => t.equal), term.later].join(' AND ')],
    );
    // Only a NULL id could leave no branch; ids are never NULL.
    const predicate = `(${branches.map((branch) => `(${branch})`).join(' OR ')})`;
    const bound = terms[0]?.bound;
    return bound ? `${bound} AND ${predicate}` : predicate;
  }

  /** The rows of the ids a SQLite search selects, read by id, in the list's order. */
  private byId(ids: string, order: string): string {
    const { table } = this;
    return (
      `SELECT ${this.selectQualified} FROM (${ids}) AS "page" ` +
      `CROSS JOIN ${table} ON ${table}."id" = "page"."id" ORDER BY ${order}`
    );
  }

  /**
   * SEARCH_WALK_ROWS: the first rows of the list's own order (an index walk, one sort key),
   * each tested for q as the short-q scan does; the outer ORDER BY repeats the inner one, so
   * SQLite reads the walk in order and stops at the page instead of sorting the window.
   */
  private walk(
    organizationId: string,
    query: ListQuery,
    searchDeadline: number,
    { filters, params }: ListClauses,
    order: string,
  ): NonNullable<ListStatements['walk']> {
    const { table } = this;
    const id = `${table}."id"`;
    const [key] = query.sort;
    const dir = key?.direction === 'asc' ? 'ASC' : 'DESC';
    const searched = this.search.map((qualified, i) => `${qualified} AS "q${i}"`);
    const tested = this.search.map(
      (_, i) => `instr(${SEARCH_FOLD_FUNCTION}("w"."q${i}"), :needle) > 0`,
    );
    const window =
      `SELECT ${id} AS "id", ${this.column(key?.field ?? 'created_at')} AS "s", ${searched.join(', ')} ` +
      `FROM ${table} WHERE ${filters.join(' AND ')} ORDER BY ${order} LIMIT :window`;
    const sortProperty = this.columns.get(key?.field ?? 'created_at')?.property ?? 'createdAt';
    return {
      sortColumn: this.repo.metadata.findColumnWithPropertyName(sortProperty)?.databaseName ?? '',
      text: this.byId(
        `SELECT "w"."id" AS "id" FROM (${window}) AS "w" ` +
          `WHERE ${SEARCH_DEADLINE_FUNCTION}(:deadline, "w"."id") AND (${tested.join(' OR ')}) ` +
          `ORDER BY "w"."s" ${dir}, "w"."id" ${dir} LIMIT :limit OFFSET :offset`,
        order,
      ),
      params: {
        organizationId,
        ...Object.fromEntries(
          Object.entries(params).filter(([k]) => /^(?:c\d+(?:_\d+)?|k\d+)$/.test(k)),
        ),
        needle: (query.q ?? '').toLowerCase(),
        deadline: searchDeadline,
        window: SEARCH_WALK_ROWS,
        limit: pageLimit(query),
        offset: query.after ? 0 : (query.page - 1) * query.per_page,
      },
    };
  }

  /**
   * POSTGRES_WALK_ROWS: the window, the list's first rows after the cursor whatever the filters,
   * is named as the table, so the query's own WHERE (filters and q) and ORDER BY test its rows.
   * It runs when the probe finds the q dense enough, or the organization small ("w").
   */
  private postgresWalk(
    query: ListQuery,
    { filters, where, params }: ListClauses,
    order: string,
    pageParams: Record<string, unknown> & { cap: number },
  ): NonNullable<ListStatements['walk']> {
    const { table } = this;
    const [key] = query.sort;
    const dir = key?.direction === 'asc' ? 'ASC' : 'DESC';
    const sort = this.column(key?.field ?? 'created_at');
    const bounds = `WHERE ${(query.after ? [filters[0], filters.at(-1)] : [filters[0]]).join(' AND ')}`;
    const window = (limit: string) =>
      `SELECT * FROM ${table} ${bounds} ORDER BY ${order} LIMIT :${limit}`;
    // The rows there are (the tally, else up to one past the window), read once if asked.
    const held = `(SELECT "total" FROM "w")`;
    const rows = this.tallied
      ? this.tallyText
      : `SELECT COUNT(*) AS "total" FROM (SELECT 1 FROM ${table} ${bounds} LIMIT :window + 1) AS "r"`;
    // The gate, InitPlans read once before the walk: enough matches first, or few rows at all.
    const gate =
      `((SELECT COUNT(*) FROM (SELECT 1 FROM (${window('probe')}) AS ${table} WHERE ${where} LIMIT :dense) AS "p") >= :dense ` +
      `OR ${held} <= :whole)`;
    const matches =
      `SELECT ${table}."id" AS "id", ${sort} AS "s" FROM (${window('window')}) AS ${table} ` +
      `WHERE ${gate} AND ${where} ORDER BY ${order} LIMIT :cap`;
    const found = `(SELECT COUNT(*) FROM "m")`;
    const property = this.columns.get(key?.field ?? 'created_at')?.property ?? 'createdAt';
    return {
      sortColumn: this.repo.metadata.findColumnWithPropertyName(property)?.databaseName ?? '',
      text:
        `WITH "w" AS (${rows}), "m" AS (${matches}) SELECT ${found} AS ${quoteIdentifier(TOTAL_COLUMN)}, ` +
        `CASE WHEN ${found} < :cap THEN ${held} END AS ${quoteIdentifier(WINDOW_COLUMN)}, ` +
        `${this.select} FROM ${table} WHERE ${table}."id" IN (SELECT "m"."id" FROM "m" ` +
        `ORDER BY "m"."s" ${dir}, "m"."id" ${dir} LIMIT :limit OFFSET :offset) ORDER BY ${order}`,
      params: {
        ...params,
        ...pageParams,
        window: POSTGRES_WALK_ROWS,
        probe: POSTGRES_WALK_PROBE,
        whole: POSTGRES_WALK_WHOLE,
        dense: Math.ceil((pageParams.cap * POSTGRES_WALK_PROBE) / POSTGRES_WALK_ROWS),
        ...(this.tallied &&
          this.tallyCount(String(params.organizationId), { ...query, conditions: [] })?.params),
      },
    };
  }

  /**
   * The total read from the collection's tallies: unfiltered, or one equality filter on a tallied
   * field (its values' tallies summed). Undefined when the query needs a count.
   */
  tallyCount(organizationId: string, query: ListQuery): ListStatements['count'] | undefined {
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

  /** A row's value of each of the query's sort keys, as a cursor carries them. */
  sortKeysOf(query: ListQuery, row: T): CursorValue[] {
    return query.sort.map((key) =>
      cursorValue((row as Record<string, unknown>)[this.columns.get(key.field)?.property ?? '']),
    );
  }

  isSearch(query: ListQuery): boolean {
    return query.q !== undefined && this.search.length > 0;
  }

  private predicate(
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
      return `${this.column(condition.field)} IN (:...${name})`;
    }
    const property = this.columns.get(condition.field)?.property ?? condition.field;
    params[name] = this.sql.bind(this.repo.metadata.target, property, condition.value);
    return `${this.column(condition.field)} ${RANGE_SQL[condition.op]} :${name}`;
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
