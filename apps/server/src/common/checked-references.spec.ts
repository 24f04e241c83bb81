import { DataSource, type EntityManager } from 'typeorm';
import { type CheckedReference, vanishedReference } from './checked-references';
import { ProblemException } from './problem.exception';

/**
 * The SQLite side of a create refused by a foreign key: its "FOREIGN KEY constraint failed"
 * names no constraint, so the references the create checked are read again and the first one
 * gone is the 400. (PostgreSQL's side, where the constraint's name says which reference it was,
 * is raced end to end in test/reference-races.e2e-spec.ts.)
 */
describe('vanishedReference on SQLite', () => {
  let dataSource: DataSource;

  beforeAll(async () => {
    dataSource = new DataSource({ type: 'better-sqlite3', database: ':memory:' });
    await dataSource.initialize();
    await dataSource.query('PRAGMA foreign_keys = ON');
    await dataSource.query('CREATE TABLE students (id varchar PRIMARY KEY)');
    await dataSource.query('CREATE TABLE exams (id varchar PRIMARY KEY)');
    await dataSource.query(
      'CREATE TABLE exam_results (id varchar PRIMARY KEY, exam_id varchar NOT NULL REFERENCES exams (id), student_id varchar NOT NULL REFERENCES students (id))',
    );
    await dataSource.query("INSERT INTO students (id) VALUES ('stu_1')");
  });
  afterAll(() => dataSource.destroy());

  const reference = (table: string, field: string, noun: string, id: string) =>
    ({
      field,
      noun,
      id,
      exists: async (manager: EntityManager) =>
        (await manager.query<unknown[]>(`SELECT 1 FROM ${table} WHERE id = ?`, [id])).length > 0,
    }) satisfies CheckedReference;

  /** The driver's own error for an insert naming an exam that is not there. */
  async function refusedInsert(): Promise<unknown> {
    return dataSource
      .query(
        "INSERT INTO exam_results (id, exam_id, student_id) VALUES ('res_1', 'exm_1', 'stu_1')",
      )
      .then(
        () => undefined,
        (error: unknown) => error,
      );
  }

  it('names the reference that is gone, as the 400 of a record never there', async () => {
    const error = await refusedInsert();
    expect(error).toMatchObject({ driverError: { code: 'SQLITE_CONSTRAINT_FOREIGNKEY' } });
    const checked = [
      reference('students', 'student_id', 'student', 'stu_1'),
      reference('exams', 'exam_id', 'exam', 'exm_1'),
    ];
    const problem = await vanishedReference(error, 'exam_results', checked, dataSource.manager);
    expect(problem).toBeInstanceOf(ProblemException);
    expect(problem).toMatchObject({
      status: 400,
      code: 'validation_error',
      detail: 'exam_id: No exam exm_1 in your organization',
      options: {
        errors: [
          {
            path: 'body.exam_id',
            message: 'No exam exm_1 in your organization',
            code: 'not_found',
          },
        ],
      },
    });
  });

  it('leaves any other failure, or one no checked reference explains, as it was', async () => {
    const error = await refusedInsert();
    const present = [reference('students', 'student_id', 'student', 'stu_1')];
    const manager = dataSource.manager;
    expect(await vanishedReference(error, 'exam_results', present, manager)).toBeUndefined();
    expect(await vanishedReference(new Error('x'), 'exam_results', [], manager)).toBeUndefined();
  });
});
