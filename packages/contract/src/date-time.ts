/**
 * The one schema for every date-time the API accepts, in query parameters and in bodies, so
 * each is checked alike and reaches the server as the same UTC instant the database compares.
 */
import { z } from './zod-openapi';

/** The instants a date-time may name: four-digit years in UTC, as every response writes them. */
export const DATE_TIME_RANGE = {
  min: '0000-01-01T00:00:00.000Z',
  max: '9999-12-31T23:59:59.999Z',
} as const;

const MIN_MS = Date.parse(DATE_TIME_RANGE.min);
const MAX_MS = Date.parse(DATE_TIME_RANGE.max);

/** zod checks the calendar and the clock but lets any two digits through as an offset. */
const OFFSET = /([+-])(\d{2}):?(\d{2})$/;

/**
 * An RFC 3339 date-time with `Z` or an offset from -23:59 to +23:59, normalised to UTC
 * (`2026-01-01T01:00:00+01:00` → `2026-01-01T00:00:00.000Z`). `name` starts the messages of a
 * query parameter (`created_at[gte] must be …`); body fields are named by their path.
 */
export function dateTimeInput(name?: string) {
  const subject = name ? `${name} must be` : 'must be';
  const format = `${subject} an RFC 3339 date-time, e.g. 2026-01-01T00:00:00Z`;
  return z
    .string()
    .datetime({ offset: true, message: format })
    .transform((value, ctx) => {
      const offset = OFFSET.exec(value);
      if (offset && (Number(offset[2]) > 23 || Number(offset[3]) > 59)) {
        ctx.addIssue({
          code: z.ZodIssueCode.custom,
          message: `${subject} an RFC 3339 date-time whose offset is Z or between -23:59 and +23:59 (got ${offset[0]})`,
        });
        return z.NEVER;
      }
      // zod has checked the form (real dates, hours 00–23), which Date.parse reads exactly.
      const ms = Date.parse(value);
      if (!(ms >= MIN_MS && ms <= MAX_MS)) {
        ctx.addIssue({
          code: z.ZodIssueCode.custom,
          message: `${subject} an instant between ${DATE_TIME_RANGE.min} and ${DATE_TIME_RANGE.max}`,
        });
        return z.NEVER;
      }
      return new Date(ms).toISOString();
    });
}
