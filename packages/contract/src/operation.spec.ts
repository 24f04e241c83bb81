import { operation, operationCost } from './operation';

describe(operation.name, () => {
  it('takes a whole cost of at least 1 unit, and a request costs 1 unless its operation says', () => {
    expect(operationCost(operation({ scope: 'exports:write', cost: 20 }))).toBe(20);
    expect(operationCost(operation({ scope: 'students:read' }))).toBe(1);
  });

  it.each([0, -1, 2.5, Number.NaN, Number.POSITIVE_INFINITY])(
    'refuses a cost of %p, naming it',
    (cost) => {
      expect(() => operation({ scope: 'students:read', cost })).toThrow(
        `an operation's cost must be a whole number of at least 1, not ${cost}`,
      );
    },
  );
});
