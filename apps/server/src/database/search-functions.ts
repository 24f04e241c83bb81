import { QueryFailedError } from 'typeorm';

/**
 * The SQL side of a `q` search's time budget, registered on every SQLite connection
 * (data-source.ts) and recognised when it fires (common/list/search-budget.ts answers with a 503).
 *
 * The time budget of a `q` search. PostgreSQL enforces it with `statement_timeout`. SQLite has
 * no statement timeout, and better-sqlite3 exposes neither `sqlite3_interrupt` nor a progress
 * handler, so the search SQL calls this function once per candidate row the index returns: past
 * the deadline it throws, which aborts the statement with the rows read so far discarded.
 */
export const SEARCH_DEADLINE_FUNCTION = 'platform_search_deadline';

class SearchDeadlinePassed extends Error {}

/**
 * `platform_search_deadline(deadline_epoch_ms, rowid)`: 1 until the deadline, then throws. The
 * candidate's rowid is only there to tie the call to the index's loop, once per row.
 */
export function searchDeadline(deadline: number, _rowid: unknown): number {
  // A time budget (elapsed wall time), not a business time: it stays on the system clock.
  if (Date.now() > deadline) throw new SearchDeadlinePassed('search deadline passed');
  return 1;
}

/**
 * `platform_search_fold(text)`: lower case beyond ASCII, for the scan of a 1–2 character q on
 * SQLite. SQLite's own LOWER() folds ASCII only (ICU is not compiled in), while the trigram
 * index folds every letter, so without it `q=é` would miss ÉMILE where `q=émi` finds it.
 */
export const SEARCH_FOLD_FUNCTION = 'platform_search_fold';

export function searchFold(text: unknown): string | null {
  return typeof text === 'string' ? text.toLowerCase() : null;
}

/** PostgreSQL's query_canceled, which statement_timeout raises. */
const QUERY_CANCELED = '57014';

export function isSearchTimeout(error: unknown): boolean {
  if (!(error instanceof QueryFailedError)) return false;
  const cause: unknown = error.driverError;
  return (
    cause instanceof SearchDeadlinePassed ||
    (typeof cause === 'object' &&
      cause !== null &&
      (cause as { code?: unknown }).code === QUERY_CANCELED)
  );
}
