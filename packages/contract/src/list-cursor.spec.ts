import { filter, listQuery } from './list';
import { decodeListCursor, encodeListCursorPayload, sortText } from './list-cursor';

const sut = listQuery({
  filters: { status: filter.oneOf(['a', 'b']) },
  sort: ['name'],
});

/** A cursor as the server builds one: the payload, a dot, a ten-character tag. */
function cursor(page: number, sort: string, values: unknown[], id = 'stu_1'): string {
  return `${encodeListCursorPayload({ page, sort, values: values as never, id })}.AbCdEfGh_-`;
}

describe('list cursors', () => {
  it('round-trips the page, sort, key values (any script) and id', () => {
    const text = cursor(7, 'name,-created_at', ['Émile 😀', null], 'stu_9');
    expect(decodeListCursor(text)).toEqual({
      page: 7,
      sort: 'name,-created_at',
      values: ['Émile 😀', null],
      id: 'stu_9',
      encoded: text.split('.')[0],
      tag: 'AbCdEfGh_-',
    });
  });

  it('writes the sort as the sort parameter takes it', () => {
    expect(
      sortText([
        { field: 'name', direction: 'asc' },
        { field: 'created_at', direction: 'desc' },
      ]),
    ).toBe('name,-created_at');
  });

  it('opens the page the cursor names, after its row', () => {
    const parsed = sut.parse({ cursor: cursor(3, '-created_at', ['2026-01-01T00:00:00.000Z']) });
    expect(parsed.page).toBe(3);
    expect(parsed.after).toMatchObject({ values: ['2026-01-01T00:00:00.000Z'], id: 'stu_1' });
    expect(sut.parse({ page: '3' }).after).toBeUndefined();
  });

  it.each([
    ['', 'not a list cursor'],
    ['42', 'not a list cursor'],
    ['42.AbCdEfGh_-', 'not a list cursor'],
    [`${'a'.repeat(2001)}`, 'not a list cursor'],
    [
      `${encodeListCursorPayload({ page: 2, sort: '-created_at', values: [], id: 'x' })}.short`,
      'not a list cursor',
    ],
    [cursor(1, '-created_at', ['x']), 'not a list cursor'],
    [cursor(2.5, '-created_at', ['x']), 'not a list cursor'],
    [cursor(2, '-created_at', [{}]), 'not a list cursor'],
    [cursor(2, '-created_at', ['x'], ''), 'not a list cursor'],
    [cursor(2, '-created_at', ['x'.repeat(1001)]), 'not a list cursor'],
    [cursor(2, 'name', ['x']), 'cursor was made for sort=name'],
    [cursor(2, '-created_at', ['x', 'y']), 'cursor was made for sort=-created_at'],
  ])('refuses cursor=%j, naming the cursor', (text, message) => {
    const issues = sut.safeParse({ cursor: text }).error?.issues ?? [];
    expect(issues).toEqual([expect.objectContaining({ path: ['cursor'] })]);
    expect(issues[0]?.message).toContain(message);
  });

  it('refuses a payload that is not JSON, or not UTF-8', () => {
    for (const payload of ['bm90IGpzb24', '_w']) {
      expect(decodeListCursor(`${payload}.AbCdEfGh_-`)).toContain('not a list cursor');
    }
  });

  it('refuses page beside cursor: the cursor names its own page', () => {
    const issues = sut.safeParse({ page: '2', cursor: cursor(2, '-created_at', ['x']) }).error
      ?.issues;
    expect(issues).toEqual([
      expect.objectContaining({
        path: ['cursor'],
        message: 'page and cursor cannot be used together: a cursor names its own page',
      }),
    ]);
  });

  it('takes the sort the cursor was made for, and filters beside it', () => {
    const parsed = sut.parse({
      sort: 'name',
      status: 'a',
      cursor: cursor(2, 'name', ['Ada']),
    });
    expect(parsed.after?.values).toEqual(['Ada']);
    expect(parsed.conditions).toEqual([{ field: 'status', op: 'in', values: ['a'] }]);
  });
});
