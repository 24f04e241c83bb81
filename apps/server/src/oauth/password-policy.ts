import { ZxcvbnFactory } from '@zxcvbn-ts/core';
import * as common from '@zxcvbn-ts/language-common';
import { ProblemException } from '../common/problem.exception';

export const MIN_PASSWORD_LENGTH = 12;
export const MAX_PASSWORD_LENGTH = 1024;
/**
 * zxcvbn's score out of 4; 3 is "safely unguessable: moderate protection from an offline
 * slow-hash scenario", which with argon2id and the sign-in limits leaves online guessing nowhere.
 */
const MIN_SCORE = 3;

let estimator: ZxcvbnFactory | undefined;

/**
 * What is wrong with a new password, or null (NIST SP 800-63B, 3.1.1.2): at least 12
 * characters, not only whitespace, and not a common or breached password, a dictionary word
 * with predictable changes, a keyboard pattern or a repetition: zxcvbn-ts with its common
 * dictionary (about 49,000 passwords from breaches) judges that, with `context` (the email, the
 * name) counted as known to an attacker. No other composition rule, as NIST advises.
 */
export function passwordProblem(password: string, context: readonly string[] = []): string | null {
  if (password.length < MIN_PASSWORD_LENGTH)
    return `must be at least ${MIN_PASSWORD_LENGTH} characters long`;
  if (password.length > MAX_PASSWORD_LENGTH)
    return `must be at most ${MAX_PASSWORD_LENGTH} characters long`;
  if (password.trim() === '') return 'must not be only spaces';
  estimator ??= new ZxcvbnFactory({
    dictionary: common.dictionary,
    graphs: common.adjacencyGraphs,
  });
  // Each value whole (an email as a password) and in its parts (a name inside one).
  const words = context
    .flatMap((value) => [value.toLowerCase(), ...value.toLowerCase().split(/[^a-z0-9]+/)])
    .filter(Boolean);
  if (estimator.check(password, words).score < MIN_SCORE) {
    return 'is too easy to guess (a common or leaked password, a word with small changes, a pattern or your own name or email); use a longer phrase of unrelated words';
  }
  return null;
}

/** 400 naming `path` (a body field) when `passwordProblem` finds one. */
export function assertPasswordAcceptable(
  password: string,
  path?: string,
  context: readonly string[] = [],
): void {
  const problem = passwordProblem(password, context);
  if (!problem) return;
  const message = `the password ${problem}`;
  throw new ProblemException(
    'validation_error',
    path ? `${path.replace(/^body\./, '')}: ${problem}` : message,
    path ? { errors: [{ path, message: problem, code: 'weak_password' }] } : undefined,
  );
}
