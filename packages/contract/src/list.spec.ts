import { describeListQuery, filter, listQuery } from './list';

describe(listQuery.name, () => {
  const sut = listQuery({
    filters: { status: filter.oneOf(['a', 'b']), level: filter.integer(0, 5) },
    ranges: { due_on: 'date' },
    sort: ['name'],
    search: ['name'],
  });

  it('says in one sentence what its query filters, ranges over and searches', () => {
    expect(describeListQuery(sut)).toBe(
      'Filters: `status`, `level`; ranges on `due_on`, `created_at`, `updated_at`; `q` searches `name`.',
    );
    expect(describeListQuery(listQuery({ filters: {}, ranges: { due_on: 'date' } }))).toBe(
      'Ranges on `due_on`, `created_at`, `updated_at`.',
    );
    expect(describeListQuery(listQuery({ filters: {} }))).toBeUndefined();
  });

  it('normalises a full query into page, sort and conditions', () => {
    const parsed = sut.parse({
      page: '3',
      per_page: '10',
      sort: '-name,created_at',
      status: 'a,b,a',
      level: '2',
      'due_on[lt]': '2026-02-01',
      'created_at[gte]': '2026-01-01T00:00:00+01:00',
      updated_since: '2026-01-02T00:00:00Z',
      q: 'ada',
    });
    expect(parsed).toEqual({
      page: 3,
      per_page: 10,
      sort: [
        { field: 'name', direction: 'desc' },
        { field: 'created_at', direction: 'asc' },
      ],
      conditions: [
        { field: 'status', op: 'in', values: ['a', 'b'] },
        { field: 'level', op: 'in', values: [2] },
        { field: 'created_at', op: 'gte', value: new Date('2025-12-31T23:00:00.000Z') },
        { field: 'due_on', op: 'lt', value: '2026-02-01' },
        { field: 'updated_at', op: 'gte', value: new Date('2026-01-02T00:00:00.000Z') },
      ],
      q: 'ada',
    });
  });

  it('defaults to page 1, 25 per page, newest first', () => {
    expect(sut.parse({})).toEqual({
      page: 1,
      per_page: 25,
      sort: [{ field: 'created_at', direction: 'desc' }],
      conditions: [],
    });
  });

  it.each([
    [{ 'due_on[gte]': '2026-02-30' }, 'due_on[gte] must be a real calendar date'],
    [{ 'due_on[gte]': '2026-2-1' }, 'YYYY-MM-DD'],
    [{ 'created_at[gte]': '2026-01-01T00:00:00+24:00' }, 'created_at[gte] must be an RFC 3339'],
    [{ updated_since: '2026-01-01T00:00:00+99:99' }, 'updated_since must be an RFC 3339'],
    [{ level: '1,x' }, "got 'x'"],
    [{ per_page: '0x10' }, 'per_page must be an integer'],
    [{ sort: '' }, "sort field '' is not sortable"],
  ])('refuses %j', (query, message) => {
    const result = sut.safeParse(query);
    expect(result.success).toBe(false);
    expect(JSON.stringify(result.error?.issues)).toContain(message);
  });

  // Refusing 1–2 characters would break `q=Li` for clients of v1 (additive changes only).
  it('refuses an empty q', () => {
    const result = sut.safeParse({ q: '' });
    expect(result.error?.issues).toEqual([
      expect.objectContaining({ path: ['q'], message: 'q must not be empty' }),
    ]);
  });

  it.each(['a', 'Li', '😀', 'é😀', 'abc', 'n-1', '😀😀😀', 'a'.repeat(200)])(
    'accepts q=%j',
    (q) => {
      expect(sut.parse({ q }).q).toBe(q);
    },
  );

  it('has no q when the collection names no searchable fields', () => {
    const noSearch = listQuery({ filters: {}, ranges: {}, sort: [] });
    expect(noSearch.safeParse({ q: 'x' }).success).toBe(false);
  });
});
