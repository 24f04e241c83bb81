import { ProblemException } from '../problem.exception';

/**
 * A 503 rather than a 400: the same search can fit the budget on a quieter server, but the
 * detail says what makes it cheaper. Retry-After keeps the SDK's automatic retries spaced out.
 */
export function searchTimedOut(budgetMs: number): ProblemException {
  return new ProblemException(
    'service_unavailable',
    `The search did not finish within its ${budgetMs} ms budget; use a longer or more specific q, or add filters`,
    { headers: { 'Retry-After': '2' } },
  );
}
