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

  describe('equality filters', () => {
    const spec = listQuery({
      filters: {
        status: filter.oneOf(['a', 'b']),
        level: filter.integer(0, 5),
        code: filter.string(3),
        student_id: filter.id('student'),
      },
    });
    const issues = (query: Record<string, string>) =>
      spec.safeParse(query).error?.issues.map(({ path, message }) => ({ path, message }));
    const conditions = (query: Record<string, string>) => spec.parse(query).conditions;

    it('trims each value, drops repeats, and reads integers as numbers', () => {
      expect(conditions({ level: ' 0 , 5,0', code: ' ab ,abc', status: 'b, a' })).toEqual([
        { field: 'status', op: 'in', values: ['b', 'a'] },
        { field: 'level', op: 'in', values: [0, 5] },
        { field: 'code', op: 'in', values: ['ab', 'abc'] },
      ]);
    });

    it.each(['-1', '6', '+1', '1e0', '2.0', '0x1', '1,-0x1', '99999999999999999'])(
      'refuses level=%j, outside 0 to 5 or not written as an integer',
      (level) => {
        const got = level.split(',').at(-1);
        expect(issues({ level })).toEqual([
          {
            path: ['level'],
            message: `level must be one or more integers between 0 and 5 (got '${got}')`,
          },
        ]);
      },
    );

    it('refuses a string value over its length, and takes one of exactly that length', () => {
      expect(issues({ code: 'abc,abcd' })).toEqual([
        { path: ['code'], message: 'code values must be at most 3 characters' },
      ]);
      expect(conditions({ code: 'xyz' })).toEqual([{ field: 'code', op: 'in', values: ['xyz'] }]);
    });

    it("refuses an id that is not the resource's, quoting at most 40 characters of it", () => {
      const id = 'stu_01JD6XZ8Y7X6W5V4T3S2R1Q0P9';
      expect(conditions({ student_id: id })).toEqual([
        { field: 'student_id', op: 'in', values: [id] },
      ]);
      expect(issues({ student_id: `${id},crs_01JD6XZ8Y7X6W5V4T3S2R1Q0P9` })).toEqual([
        {
          path: ['student_id'],
          message:
            "student_id must be one or more stu_… ids (got 'crs_01JD6XZ8Y7X6W5V4T3S2R1Q0P9')",
        },
      ]);
      expect(issues({ student_id: `stu_${'x'.repeat(60)}` })).toEqual([
        {
          path: ['student_id'],
          message: `student_id must be one or more stu_… ids (got 'stu_${'x'.repeat(36)}')`,
        },
      ]);
    });

    it('names the values an enum filter takes', () => {
      expect(issues({ status: 'a,c' })).toEqual([
        { path: ['status'], message: "status must be one or more of a, b (got 'c')" },
      ]);
    });

    it('refuses a filter over 2000 characters, and empty values', () => {
      expect(issues({ code: 'a,'.repeat(1000) + 'a' })).toEqual([
        { path: ['code'], message: 'code is too long' },
      ]);
      expect(issues({ code: 'a,,b' })).toEqual([
        { path: ['code'], message: 'code must not contain empty values' },
      ]);
    });
  });

  it('names the fields sort takes, and reads - only in front', () => {
    for (const sort of ['email', 'name-']) {
      expect(sut.safeParse({ sort }).error?.issues.map((i) => i.message)).toEqual([
        `sort field '${sort}' is not sortable; use name, created_at, updated_at (prefix - for descending)`,
      ]);
    }
  });

  it('refuses a q over 200 characters', () => {
    expect(sut.safeParse({ q: 'a'.repeat(201) }).error?.issues.map((i) => i.message)).toEqual([
      'q must be at most 200 characters',
    ]);
  });

  it('describes only list query schemas', () => {
    expect(() => describeListQuery({})).toThrow(
      'not a list query schema (build it with listQuery)',
    );
  });
});
