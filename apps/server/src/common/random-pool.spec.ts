import { pooledPrng, randomHex } from './random-pool';
import { newId } from './ids';

describe('random pool', () => {
  it('gives fractions in [0, 1) in steps of 1/256, as ulid’s default PRNG', () => {
    const draws = Array.from({ length: 10_000 }, () => pooledPrng());
    expect(draws.every((d) => d >= 0 && d < 1 && Number.isInteger(d * 256))).toBe(true);
    // Across several refills of the pool, not one repeated value.
    expect(new Set(draws).size).toBeGreaterThan(200);
  });

  it('mints distinct request-id hex and ids across refills', () => {
    const hex = new Set(Array.from({ length: 2_000 }, () => randomHex(12)));
    expect(hex.size).toBe(2_000);
    expect([...hex].every((h) => /^[0-9a-f]{24}$/.test(h))).toBe(true);
    const ids = Array.from({ length: 2_000 }, () => newId('student'));
    expect(new Set(ids).size).toBe(2_000);
    expect([...ids].sort()).toEqual(ids);
  });
});
