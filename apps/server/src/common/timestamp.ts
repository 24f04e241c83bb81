/**
 * Timestamps are entity `Date`s. TypeORM stores them as UTC text with milliseconds on SQLite
 * and as `timestamptz` on PostgreSQL (the migrations choose the column type).
 */
export const timestampColumn = { type: Date, precision: 3 } as const;

const pad2 = (n: number) => (n < 10 ? `0${n}` : `${n}`);

/**
 * RFC 3339 in UTC with milliseconds, exactly as `Date.prototype.toISOString` writes it, in about
 * a third of its time on this machine (~0.4 µs against ~1.1 µs): a PostgreSQL list page formats
 * 50 timestamps, a batch upsert thousands. Outside four-digit years, and for an invalid date (its
 * `RangeError`), `toISOString` itself.
 */
export function toIso(date: Date): string {
  const year = date.getUTCFullYear();
  if (!(year >= 1000 && year <= 9999)) return date.toISOString();
  const ms = date.getUTCMilliseconds();
  const millis = ms < 10 ? `00${ms}` : ms < 100 ? `0${ms}` : `${ms}`;
  return `${year}-${pad2(date.getUTCMonth() + 1)}-${pad2(date.getUTCDate())}T${pad2(date.getUTCHours())}:${pad2(date.getUTCMinutes())}:${pad2(date.getUTCSeconds())}.${millis}Z`;
}
