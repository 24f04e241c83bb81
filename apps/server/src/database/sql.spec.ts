import { compileSql } from './sql';

describe('compileSql: named parameters to each driver’s placeholders', () => {
  it('numbers PostgreSQL placeholders in order and reuses one for a name used twice', () => {
    expect(
      compileSql('postgres', 'SELECT * FROM t WHERE a = :a AND (b = :b OR c = :a)', { a: 1, b: 2 }),
    ).toEqual({ text: 'SELECT * FROM t WHERE a = $1 AND (b = $2 OR c = $1)', values: [1, 2] });
  });

  it('gives SQLite one ? per use, binding a repeated name again', () => {
    expect(
      compileSql('sqlite', 'SELECT * FROM t WHERE a = :a AND (b = :b OR c = :a)', { a: 1, b: 2 }),
    ).toEqual({ text: 'SELECT * FROM t WHERE a = ? AND (b = ? OR c = ?)', values: [1, 2, 1] });
  });

  it('spreads a list, and binds an empty one as a NULL that matches nothing', () => {
    expect(compileSql('postgres', 'SELECT 1 WHERE id IN (:...ids)', { ids: ['x', 'y'] })).toEqual({
      text: 'SELECT 1 WHERE id IN ($1, $2)',
      values: ['x', 'y'],
    });
    expect(compileSql('sqlite', 'SELECT 1 WHERE id IN (:...ids)', { ids: [] })).toEqual({
      text: 'SELECT 1 WHERE id IN (?)',
      values: [null],
    });
  });

  it('numbers a list after the values before it; a list used twice binds once on PostgreSQL', () => {
    const text = 'SELECT 1 WHERE a = :a AND id IN (:...ids) AND b = :b AND id NOT IN (:...ids)';
    expect(compileSql('postgres', text, { a: 1, ids: ['x', 'y', 'z'], b: 2 })).toEqual({
      text: 'SELECT 1 WHERE a = $1 AND id IN ($2, $3, $4) AND b = $5 AND id NOT IN ($2, $3, $4)',
      values: [1, 'x', 'y', 'z', 2],
    });
    expect(compileSql('sqlite', text, { a: 1, ids: ['x', 'y'], b: 2 })).toEqual({
      text: 'SELECT 1 WHERE a = ? AND id IN (?, ?) AND b = ? AND id NOT IN (?, ?)',
      values: [1, 'x', 'y', 2, 'x', 'y'],
    });
  });

  it('leaves casts, quoted strings, quoted identifiers and comments alone', () => {
    const text = `SELECT ':nope', "a:b", x::text -- :comment\nFROM t WHERE y = :y`;
    expect(compileSql('postgres', text, { y: 3 })).toEqual({
      text: `SELECT ':nope', "a:b", x::text -- :comment\nFROM t WHERE y = $1`,
      values: [3],
    });
    expect(compileSql('sqlite', "SELECT 'it''s :x' WHERE z = :z", { z: 1 }).text).toBe(
      "SELECT 'it''s :x' WHERE z = ?",
    );
  });

  it('refuses a missing value, an unused one, and a list that is not an array', () => {
    expect(() => compileSql('sqlite', 'SELECT :a', {})).toThrow(':a has no value');
    expect(() => compileSql('sqlite', 'SELECT :a', { a: 1, b: 2 })).toThrow(':b is not used');
    expect(() => compileSql('sqlite', 'SELECT :...a', { a: 1 })).toThrow('must be an array');
  });

  it('compiles a text again with new values and list lengths after it was planned', () => {
    const text = 'SELECT 1 WHERE a = :a AND id IN (:...ids) AND b = :b AND id NOT IN (:...ids)';
    const first = compileSql('postgres', text, { a: 1, ids: ['x'], b: 2 });
    expect(compileSql('postgres', text, { a: 3, ids: ['y'], b: 4 })).toEqual({
      text: first.text,
      values: [3, 'y', 4],
    });
    expect(compileSql('postgres', text, { a: 5, ids: ['p', 'q'], b: 6 })).toEqual({
      text: 'SELECT 1 WHERE a = $1 AND id IN ($2, $3) AND b = $4 AND id NOT IN ($2, $3)',
      values: [5, 'p', 'q', 6],
    });
    expect(compileSql('sqlite', text, { a: 7, ids: [], b: 8 })).toEqual({
      text: 'SELECT 1 WHERE a = ? AND id IN (?) AND b = ? AND id NOT IN (?)',
      values: [7, null, 8, null],
    });
    // The plan kept for one dialect is not the other's.
    expect(compileSql('sqlite', text, { a: 9, ids: ['z'], b: 10 }).values).toEqual([
      9,
      'z',
      10,
      'z',
    ]);
  });

  it('still refuses bad parameters for a text it has planned', () => {
    const text = 'SELECT :a, :b';
    expect(compileSql('sqlite', text, { a: 1, b: 2 }).values).toEqual([1, 2]);
    expect(() => compileSql('sqlite', text, { a: 1, c: 2 })).toThrow(':b has no value');
    expect(() => compileSql('sqlite', text, { a: 1, b: 2, c: 3 })).toThrow(':c is not used');
    expect(() => compileSql('sqlite', 'SELECT :...a', { a: ['x'] }).values).not.toThrow();
    expect(() => compileSql('sqlite', 'SELECT :...a', { a: 'x' })).toThrow('must be an array');
    expect(() => compileSql('sqlite', 'SELECT :...a', {})).toThrow(':a has no value');
  });
});
