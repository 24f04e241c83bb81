/**
 * The types and bounds of a collection's list, shared by `find-page.ts` (which builds and runs its
 * statements) and `list-fields.ts` (which derives its fields from the contract).
 */
import type { SqlParams } from '../../database/sql';

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
  /**
   * SEARCH_WALK_ROWS (SQLite): the page taken by walking the list's order; valid only when full.
   * POSTGRES_WALK_ROWS: the page, each row carrying the matches the walk counted (TOTAL_COLUMN,
   * at most the count's `cap`) and, when that is under `cap`, how many rows its window held
   * (WINDOW_COLUMN); see FindPage's postgresSearch for when it answers.
   */
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

/**
 * On SQLite, a search in an organization of at most this many rows (its tally) scans them, as a
 * q of under 3 characters does, instead of starting from the trigram index. That index is the
 * whole database's: a small school's `nakamura` read every Nakamura of every organization (20,000
 * at a million students, past the budget: a 503) to find its own 40.
 */
export const SQLITE_SCAN_WHOLE = 3_000;

/**
 * On PostgreSQL a search of 3+ characters first walks up to this many rows of the organization in
 * the list's order (its `(organization_id, sort field, id)` index, after the cursor), testing each
 * for the filters and q, and stops at the count's bound. The walk runs when a probe finds the q
 * broad (POSTGRES_WALK_PROBE) or when the organization is small (POSTGRES_WALK_WHOLE). When the
 * bound is reached, the page and the (inexact) total come from the walk; when the walk saw every
 * row, so do the page and the exact total. Otherwise the trigram count and page run. A trigram
 * bitmap is built whole before its first row is read, and over the whole table: a q whose
 * trigrams most rows contain (an email domain, or one narrowed by a filter) cost more than the
 * budget at a million rows (a 503), and a small school's search cost more in a big table than in
 * a small one. Fewer rows than SQLite's: PostgreSQL's `lower()` costs ~2.5 µs a row. A broad q is
 * one that `cap / POSTGRES_WALK_ROWS` of the walked rows contain (2.25 % for page 1,
 * `per_page=25`).
 */
export const POSTGRES_WALK_ROWS = 10_000;

/**
 * An organization with at most this many rows (its tally, else its index counted up to one past
 * POSTGRES_WALK_ROWS) is walked whatever the probe finds: its walk costs what a trigram bitmap
 * over a small table does, and no more in a big one.
 */
export const POSTGRES_WALK_WHOLE = 3_000;

/**
 * The column that carries, on a PostgreSQL walk's rows, how many rows it had to walk (the
 * organization's tally, else counted up to one past POSTGRES_WALK_ROWS) when it found fewer
 * matches than its bound. At most POSTGRES_WALK_ROWS: the walk saw every row.
 */
export const WINDOW_COLUMN = '__window';

/**
 * The rows of POSTGRES_WALK_ROWS's window read first, as a probe: unless they hold the matches
 * the count's bound needs at that rate (or the organization is small), the walk stops there
 * (0.9 ms at a million rows).
 */
export const POSTGRES_WALK_PROBE = 500;

/** `meta.total` and whether it is exact (see TOTAL_COUNT_AHEAD). */
export interface PageTotal {
  count: number;
  exact: boolean;
  /** The cursor `links.next` carries: set when the page is full, so more may follow. */
  nextCursor?: string;
}

/**
 * Rows a page statement reads. Under a cursor one more than the page: whether a record follows
 * decides `links.next` (a page number has its total for that), so a walk never ends on an empty
 * page.
 */
export function pageLimit(query: { after?: unknown; per_page: number }): number {
  return query.after ? query.per_page + 1 : query.per_page;
}

/** The FROM and WHERE of one list query, with their parameters (ListSql.clauses). */
export interface ListClauses {
  from: string;
  where: string;
  /** The organization and the query's filters (without q), also the walk's (SEARCH_WALK_ROWS). */
  filters: string[];
  params: Record<string, unknown>;
  /** A SQLite search: the page's ids come from its joins, and its rows are read by id. */
  sqliteSearch: boolean;
  /** A SQLite search of 3+ characters, which starts from the trigram index. */
  indexed: boolean;
}

/**
 * The column that carries a tallied total on each of the page's rows (ListStatements'
 * `pageWithTotal`): one statement and one round trip per list request instead of two. No entity
 * column starts with `__`.
 */
export const TOTAL_COLUMN = '__total';
