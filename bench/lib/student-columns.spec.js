'use strict';
const { StudentSchema } = require('@platform/contract');
const {
  studentColumns,
  studentEntries,
  studentInsert,
  studentRecord,
} = require('./student-columns');

// Every column with a value: what the seeds give today.
const ALL = {
  id: `'stu_1'`,
  organization_id: '?',
  external_id: 'NULL',
  student_number: `'S1'`,
  first_name: `'Ada'`,
  last_name: `'Lovelace'`,
  preferred_name: 'NULL',
  email: `'ada@school.test'`,
  date_of_birth: `'2010-01-01'`,
  status: `'active'`,
  grade_level: '3',
  created_at: 'c',
  updated_at: 'c',
};

// The contract with one more field of each kind, as if a plain field were added to students.
const shape = StudentSchema.shape;
const GROWN = StudentSchema.extend({ nickname: shape.preferred_name, house: shape.first_name });

describe('studentColumns', () => {
  it("is StudentSchema's fields, object aside, and organization_id after id", () => {
    const declared = Object.keys(StudentSchema.shape).filter((field) => field !== 'object');
    const columns = studentColumns();
    expect(columns.slice(0, 2)).toEqual(['id', 'organization_id']);
    expect([...columns].sort()).toEqual([...declared, 'organization_id'].sort());
    expect(columns).not.toContain('object');
  });

  it('follows the schema it is given', () => {
    expect(studentColumns(GROWN).slice(-2)).toEqual(['nickname', 'house']);
  });
});

describe('studentInsert', () => {
  it('lists the columns and their expressions in the same order', () => {
    const { columns, select } = studentInsert(ALL, { file: __filename });
    expect(columns).toBe(studentColumns().join(', '));
    expect(select).toBe(
      studentColumns()
        .map((column) => ALL[column])
        .join(', '),
    );
  });

  it('makes a nullable column left out NULL', () => {
    const { preferred_name: _, ...rest } = ALL;
    expect(studentInsert(rest, { file: __filename })).toEqual(studentInsert(ALL, {}));
    const grown = studentEntries(
      { ...ALL, house: `'Gryffindor'` },
      { empty: 'NULL', schema: GROWN },
    );
    expect(Object.fromEntries(grown)).toMatchObject({ nickname: 'NULL', house: `'Gryffindor'` });
  });

  it('refuses a required column left out, naming it and the file to add it in', () => {
    const call = () => studentInsert(ALL, { file: __filename, schema: GROWN });
    expect(call).toThrow(/students\.house is not nullable.*add one for house in bench\/lib\//);
    const { status: _, ...noStatus } = ALL;
    expect(() => studentInsert(noStatus, { file: __filename })).toThrow(/students\.status/);
    const { organization_id: __, ...noOrg } = ALL;
    expect(() => studentInsert(noOrg, { file: __filename })).toThrow(/organization_id/);
  });

  it('refuses a key that is no column', () => {
    const call = () => studentInsert({ ...ALL, object: `'student'`, nick: 'x' }, {});
    expect(call).toThrow(/object, nick are not a column of students/);
  });
});

describe('studentRecord', () => {
  it('keys a row by column in column order, a nullable one left out null', () => {
    const { preferred_name: _, ...rest } = ALL;
    const record = studentRecord(rest, { file: __filename });
    expect(Object.keys(record)).toEqual(studentColumns());
    expect(record.preferred_name).toBeNull();
    expect(record.first_name).toBe(`'Ada'`);
  });
});
