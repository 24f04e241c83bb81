/**
 * Timestamps are entity `Date`s. TypeORM stores them as UTC text with milliseconds on SQLite
 * and as `timestamptz` on PostgreSQL (the migrations choose the column type).
 */
export const timestampColumn = { type: Date, precision: 3 } as const;

export function toIso(date: Date): string {
  return date.toISOString();
}
