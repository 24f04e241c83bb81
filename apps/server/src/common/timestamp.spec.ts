import fc from 'fast-check';
import { toIso } from './timestamp';

describe(toIso.name, () => {
  it('writes what toISOString writes, for any valid date', () => {
    fc.assert(
      fc.property(fc.date({ noInvalidDate: true }), (date) => {
        expect(toIso(date)).toBe(date.toISOString());
      }),
      { numRuns: 5000 },
    );
  });

  it('pads each part: the first millisecond of a year, single digits, two-digit milliseconds', () => {
    for (const at of [
      Date.UTC(2026, 0, 1, 0, 0, 0, 0),
      Date.UTC(2026, 8, 9, 7, 5, 3, 7),
      Date.UTC(1999, 11, 31, 23, 59, 59, 999),
      Date.UTC(2024, 1, 29, 12, 30, 45, 42),
      Date.UTC(1000, 0, 1),
      Date.UTC(9999, 11, 31, 23, 59, 59, 999),
    ]) {
      expect(toIso(new Date(at))).toBe(new Date(at).toISOString());
    }
  });

  it('writes years outside 1000–9999 as toISOString does, and refuses an invalid date as it does', () => {
    expect(toIso(new Date(Date.UTC(999, 0, 1)))).toBe('0999-01-01T00:00:00.000Z');
    expect(toIso(new Date(Date.UTC(10000, 0, 1)))).toBe('+010000-01-01T00:00:00.000Z');
    expect(toIso(new Date(Date.UTC(-1, 0, 1)))).toBe('-000001-01-01T00:00:00.000Z');
    expect(() => toIso(new Date(Number.NaN))).toThrow(RangeError);
  });
});
