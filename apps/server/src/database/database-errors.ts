import { QueryRunnerAlreadyReleasedError, QueryRunnerProviderAlreadyReleasedError } from 'typeorm';

/**
 * Which database failures are the infrastructure's (the database is down, unreachable, out of
 * space or overloaded) rather than the request's or the code's: those answer
 * `503 service_unavailable` with `Retry-After`, since the same request will work once the
 * database is back, and are logged as an outage rather than as an unhandled error.
 */

/** Thrown where the server itself finds the database unusable (a connection it cannot reset). */
export class DatabaseUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DatabaseUnavailableError';
  }
}

/** SQLite result codes (better-sqlite3's `code`, extended codes included) of an unusable database. */
const SQLITE_UNAVAILABLE = /^SQLITE_(FULL|IOERR|BUSY|LOCKED|NOMEM|CANTOPEN|READONLY|PROTOCOL)/;
/**
 * PostgreSQL SQLSTATEs of an unusable server: class 08 (connection exception), 53 (insufficient
 * resources: disk full, out of memory, too many connections), 57P01-57P05 (shut down, crashed,
 * not yet accepting connections, idle-session timeout), 58 (system error: I/O).
 */
const POSTGRES_UNAVAILABLE = /^(08|53|57P0[1-5]|58)/;
/** Socket errors of a database connection (node-postgres passes them through as they are). */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);
/** node-postgres's own messages for a connection that ended or could not be made in time. */
const POSTGRES_CONNECTION_MESSAGES =
  /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Client was closed and is not queryable)/;

/**
 * TypeORM's refusals to use a query runner already released. On PostgreSQL it releases a
 * transaction's runner itself when its connection reports an error (the server shut down, the
 * socket reset), so the transaction's next statement fails with one of these, carrying no driver
 * code, before anything is sent: the outage, met one step later.
 */
function isReleasedRunner(error: unknown): boolean {
  return (
    error instanceof QueryRunnerProviderAlreadyReleasedError ||
    error instanceof QueryRunnerAlreadyReleasedError
  );
}

/** The error and what it wraps (TypeORM's `driverError`, an `Error`'s `cause`), outermost first. */
function* chain(error: unknown): Generator<unknown> {
  const seen = new Set<unknown>();
  let current: unknown = error;
  while (current && typeof current === 'object' && !seen.has(current)) {
    seen.add(current);
    yield current;
    const next =
      (current as { driverError?: unknown }).driverError ?? (current as { cause?: unknown }).cause;
    current = next;
  }
}

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' ? code : undefined;
}

/** True when `error` means the database cannot serve now (see the file comment). */
export function isDatabaseUnavailable(error: unknown): boolean {
  for (const link of chain(error)) {
    if (link instanceof DatabaseUnavailableError || isReleasedRunner(link)) return true;
    const code = codeOf(link);
    if (code !== undefined) {
      if (code.startsWith('SQLITE_')) return SQLITE_UNAVAILABLE.test(code);
      if (NETWORK_CODES.has(code)) return true;
      if (/^[0-9A-Z]{5}$/.test(code)) return POSTGRES_UNAVAILABLE.test(code);
    }
    if (link instanceof Error && POSTGRES_CONNECTION_MESSAGES.test(link.message)) return true;
  }
  return false;
}

/** True when the database refused a write for lack of space (SQLITE_FULL, PostgreSQL 53100). */
export function isStorageFull(error: unknown): boolean {
  for (const link of chain(error)) {
    const code = codeOf(link);
    if (code === 'SQLITE_FULL' || code === '53100') return true;
  }
  return false;
}

/** The driver's code of a database error (`SQLITE_FULL`, `57P01`, `ECONNREFUSED`), for a log line. */
export function databaseErrorCode(error: unknown): string | undefined {
  for (const link of chain(error)) {
    const code = codeOf(link);
    if (code !== undefined) return code;
  }
  return undefined;
}
