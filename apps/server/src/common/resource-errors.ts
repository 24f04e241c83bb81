import { ProblemException } from './problem.exception';

/** 404 for an id in the path that does not exist in the caller's organization. */
export function notFound(noun: string, id: string): ProblemException {
  return new ProblemException('not_found', `No ${noun} ${id} in your organization`);
}

/** 400 for an id in the body that does not exist in the caller's organization. */
export function unknownReference(field: string, noun: string, id: string): ProblemException {
  const message = `No ${noun} ${id} in your organization`;
  return new ProblemException('validation_error', `${field}: ${message}`, {
    errors: [{ path: `body.${field}`, message, code: 'not_found' }],
  });
}

/** 400 for a value the schema allows but the record's state does not. */
export function invalidField(field: string, message: string): ProblemException {
  return new ProblemException('validation_error', `${field}: ${message}`, {
    errors: [{ path: `body.${field}`, message, code: 'invalid' }],
  });
}

/** 409 for a uniqueness rule. */
export function alreadyExists(field: string, message: string): ProblemException {
  return new ProblemException('conflict', message, {
    errors: [{ path: `body.${field}`, message, code: 'already_exists' }],
  });
}

/** 409 for a state machine transition that is not allowed from the current state. */
export function invalidTransition(
  noun: string,
  current: string,
  requested: string,
  allowedFrom: readonly string[],
): ProblemException {
  return new ProblemException(
    'invalid_state_transition',
    `Cannot move this ${noun} from '${current}' to '${requested}'; that is allowed only from ${allowedFrom.map((s) => `'${s}'`).join(' or ')}`,
  );
}

/** Whether a database error is a unique-index violation, on SQLite or PostgreSQL. */
export function isUniqueViolation(error: unknown): boolean {
  const e = error as { code?: string; driverError?: { code?: string } } | null;
  const code = e?.driverError?.code ?? e?.code;
  return (
    code === '23505' ||
    code === 'SQLITE_CONSTRAINT_UNIQUE' ||
    code === 'SQLITE_CONSTRAINT_PRIMARYKEY'
  );
}

/**
 * Whether a database error is a foreign-key violation: a delete of a row others still refer to,
 * or an insert referring to a row that is not there (PostgreSQL 23503, SQLite
 * SQLITE_CONSTRAINT_FOREIGNKEY).
 */
export function isForeignKeyViolation(error: unknown): boolean {
  const e = error as { code?: string; driverError?: { code?: string } } | null;
  const code = e?.driverError?.code ?? e?.code;
  return code === '23503' || code === 'SQLITE_CONSTRAINT_FOREIGNKEY';
}

/**
 * The constraint a foreign-key violation names: PostgreSQL's `constraint` field
 * (`payments_student_id_fkey`); SQLite's "FOREIGN KEY constraint failed" names none.
 */
export function foreignKeyConstraint(error: unknown): string | undefined {
  const e = error as { constraint?: unknown; driverError?: { constraint?: unknown } } | null;
  const constraint = e?.driverError?.constraint ?? e?.constraint;
  return typeof constraint === 'string' ? constraint : undefined;
}

/** 409 for a delete that other records still refer to. */
export function stillReferenced(
  noun: string,
  id: string,
  by: string,
  instead: string,
): ProblemException {
  return new ProblemException(
    'conflict',
    `${noun} ${id} is still referred to by ${by}; ${instead}`,
  );
}
