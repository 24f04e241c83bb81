/**
 * The tables come from the contract: one column per field of each resource's schema, typed by
 * the field, and a field added to a schema becomes a column, added to an existing table on the
 * next run (ALTER TABLE ADD COLUMN) with the rows it holds kept.
 */
import { EVENT_CATALOG, EXPORT_COLLECTIONS, RESOURCES, StudentSchema } from '@platform/contract';
import { z } from 'zod';
import { collectionTable, deriveTable } from '../src/schema';
import { ensureTables, upsertRows } from '../src/tables';
import { parseCommandLine } from '../src/cli';
import { freshMirrorDatabase, openMirror } from './support';

it('has a table for every exported collection, with a column for every field of its schema', () => {
  for (const collection of EXPORT_COLLECTIONS) {
    const schema = EVENT_CATALOG[`${RESOURCES[collection].singular}.created` as 'student.created'];
    const columns = collectionTable(collection).columns.map((column) => column.name);
    expect(columns[0]).toBe('id');
    expect([...columns].sort()).toEqual(Object.keys(schema.shape).sort());
  }
  const kinds = (name: (typeof EXPORT_COLLECTIONS)[number]) =>
    Object.fromEntries(collectionTable(name).columns.map((column) => [column.name, column.kind]));
  expect(kinds('students')).toMatchObject({
    id: 'text',
    grade_level: 'integer',
    date_of_birth: 'text',
    status: 'text',
    updated_at: 'text',
  });
  expect(kinds('exams')).toMatchObject({ max_score: 'real' });
  expect(kinds('payments')).toMatchObject({ amount: 'integer', enrollment_id: 'text' });
});

const Widened = StudentSchema.extend({
  nickname: z.string().nullable(),
  tags: z.array(z.string()),
  verified: z.boolean(),
  address: z.object({ city: z.string() }).optional(),
});

it('derives a column from a field added to a schema, typed by the field', () => {
  const table = deriveTable('students', 'student', Widened);
  expect(table.columns.slice(-4)).toEqual([
    { name: 'nickname', kind: 'text' },
    { name: 'tags', kind: 'json' },
    { name: 'verified', kind: 'boolean' },
    { name: 'address', kind: 'json' },
  ]);
});

it('adds the new columns to an existing table and keeps its rows', async () => {
  const database = await freshMirrorDatabase();
  const db = await openMirror(database.url);
  try {
    const before = collectionTable('students');
    expect(await ensureTables(db, [before])).toEqual(new Map());
    const row = {
      id: 'stu_01JA0000000000000000000000',
      student_number: 'S-1',
      first_name: 'Ada',
      last_name: 'Lovelace',
      grade_level: 7,
      updated_at: '2026-11-22T10:00:00.000Z',
    };
    await db.transaction((tx) => upsertRows(tx, db.dialect, before, [row]));

    const after = deriveTable('students', 'student', Widened);
    const added = await ensureTables(db, [after]);
    expect(added).toEqual(new Map([['students', ['nickname', 'tags', 'verified', 'address']]]));
    expect(await db.dialect.columnsOf(db, 'students')).toEqual(after.columns.map((c) => c.name));
    await db.transaction((tx) =>
      upsertRows(tx, db.dialect, after, [
        {
          ...row,
          id: 'stu_01JA0000000000000000000001',
          tags: ['a'],
          verified: true,
          address: { city: 'Ghent' },
        },
      ]),
    );
    const rows = await db.all<Record<string, unknown>>(
      'SELECT "id", "first_name", "grade_level", "tags", "verified", "address" FROM "students" ORDER BY "id"',
    );
    expect(rows.map((r) => [r.first_name, Number(r.grade_level)])).toEqual([
      ['Ada', 7],
      ['Ada', 7],
    ]);
    expect(rows[0]).toMatchObject({ tags: null, address: null });
    const json = (value: unknown) => (typeof value === 'string' ? JSON.parse(value) : value);
    expect([json(rows[1]!.tags), json(rows[1]!.address), Boolean(rows[1]!.verified)]).toEqual([
      ['a'],
      { city: 'Ghent' },
      true,
    ]);
    // Run again: nothing more to add.
    expect(await ensureTables(db, [after])).toEqual(new Map());
  } finally {
    await db.close();
    await database.drop();
  }
});

describe('the command line', () => {
  const base = ['--database', 'sqlite:m.db', '--token', 't', '--base-url', 'http://127.0.0.1:1'];

  it('takes every collection by default, or the ones named', () => {
    expect(parseCommandLine(base, {})).toMatchObject({
      collections: [...EXPORT_COLLECTIONS],
      once: false,
    });
    expect(
      parseCommandLine([...base, '--collections', 'courses,students', '--once'], {}),
    ).toMatchObject({
      collections: ['courses', 'students'],
      once: true,
    });
  });

  it('names what is wrong', () => {
    expect(() => parseCommandLine([...base, '--collections', 'students,teachers'], {})).toThrow(
      /--collections: teachers is not a collection the API exports \(students, courses, /,
    );
    expect(() => parseCommandLine(['--token', 't', '--base-url', 'http://x'], {})).toThrow(
      '--database is required (or set PLATFORM_SYNC_DATABASE)',
    );
    expect(() => parseCommandLine([...base, '--batch-size', '0'], {})).toThrow(
      "--batch-size must be a positive integer, got '0'",
    );
    expect(() => parseCommandLine([...base, '--bogus'], {})).toThrow(/Unknown option '--bogus'/);
    expect(() => parseCommandLine(['--database', 'mysql://db/x', ...base.slice(2)], {})).toThrow(
      "--database must be postgres://user:password@host/db or sqlite:path/to/file.db, got 'mysql:…'",
    );
    expect(() => parseCommandLine([...base, '--once', '--verify'], {})).toThrow(
      '--once and --verify: choose one',
    );
  });

  it('reads the token and the address from the environment', () => {
    expect(
      parseCommandLine(['--database', 'sqlite:m.db'], {
        PLATFORM_TOKEN: 'tok',
        PLATFORM_URL: 'http://127.0.0.1:2',
      }),
    ).toMatchObject({ token: 'tok', baseUrl: 'http://127.0.0.1:2' });
  });
});
