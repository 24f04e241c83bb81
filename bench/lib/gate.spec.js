const { format, judge } = require('./gate');

const FLOORS = {
  list: { floor: 0.3, margin: 0.25, what: 'list page 1, server / bare' },
  delivery: { floor: 0.4, margin: 0.25, what: 'delivery, dispatcher / bare' },
};

describe('the regression gate', () => {
  it('passes ratios at or above the floor less its margin', () => {
    const rows = judge(FLOORS, { list: 0.225, delivery: 0.5 });
    expect(rows.map((r) => r.ok)).toEqual([true, true]);
    expect(rows[0].limit).toBeCloseTo(0.225);
  });

  it('fails a ratio that fell more than the margin below its floor, and one not measured', () => {
    const rows = judge(FLOORS, { list: 0.2, delivery: undefined });
    expect(rows.map((r) => [r.name, r.ok])).toEqual([
      ['list', false],
      ['delivery', false],
    ]);
    expect(format(rows)).toMatch(
      /^FAIL list page 1, server \/ bare .* 0\.20 {3}floor 0\.30, fails below 0\.22$/m,
    );
    expect(format(rows)).toMatch(/FAIL delivery, dispatcher \/ bare +not measured/);
  });

  it('refuses a floor without a sensible margin', () => {
    expect(() => judge({ x: { floor: 0.3, margin: 1, what: 'x' } }, { x: 1 })).toThrow(
      /x needs a floor > 0 and a margin in \[0, 1\)/,
    );
  });
});
