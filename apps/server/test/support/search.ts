import { SEARCH_COUNT_AHEAD } from '../../src/common/list/find-page';
import type { Student } from '../../src/testing';

/**
 * `meta.total` and `total_exact` of a search's page: the matches, counted up to
 * `offset + per_page + SEARCH_COUNT_AHEAD`; past that, that bound, flagged inexact.
 */
export function searchTotal(matches: number, perPage: number, page = 1) {
  const cap = page * perPage + SEARCH_COUNT_AHEAD;
  return { total: Math.min(matches, cap), total_exact: matches < cap };
}

/** The students a `q` matches: a substring of a searched field, in any case. */
export function matching(students: Student[], q: string): Student[] {
  return students.filter((s) =>
    [s.firstName, s.lastName, s.email, s.studentNumber].some((v) =>
      v?.toLowerCase().includes(q.toLowerCase()),
    ),
  );
}
