import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  contract,
  CourseCreateSchema,
  CourseSchema,
  CourseUpdateSchema,
  EnrollmentCreateSchema,
  EnrollmentSchema,
  EnrollmentUpdateSchema,
  ExamCreateSchema,
  ExamResultCreateSchema,
  ExamResultSchema,
  ExamResultUpdateSchema,
  ExamSchema,
  ExamUpdateSchema,
  listSpecOf,
  PaymentCreateSchema,
  PaymentSchema,
  StudentCreateSchema,
  StudentSchema,
  StudentUpdateSchema,
} from '@platform/contract';
import { DataSource, type EntityMetadata, type EntityTarget, type ObjectLiteral } from 'typeorm';
import type { z } from 'zod';
import { loadConfig } from '../../config/env';
import { Course } from '../../courses/course.entity';
import { COURSE_UPDATABLE, toCourseResource } from '../../courses/courses.service';
import { dataSourceOptions } from '../../database/data-source';
import { APP_SCHEMA } from '../../schema';
import { Enrollment } from '../../enrollments/enrollment.entity';
import { ENROLLMENT_UPDATABLE, toEnrollmentResource } from '../../enrollments/enrollments.service';
import { ExamResult } from '../../exams/exam-result.entity';
import { EXAM_RESULT_UPDATABLE, toExamResultResource } from '../../exams/exam-results.service';
import { Exam } from '../../exams/exam.entity';
import { EXAM_UPDATABLE, toExamResource } from '../../exams/exams.service';
import { Payment } from '../../payments/payment.entity';
import { toPaymentResource } from '../../payments/payments.service';
import { Student } from '../../students/student.entity';
import { STUDENT_UPDATABLE, toStudentResource } from '../../students/students.service';
import { listFieldsFor } from './list-fields';

/**
 * Every field of every resource the domain modules serve, walked from the contract: a field added
 * to a resource, an update body, a create body or a list query that the server does not map,
 * update, store or list by fails here (the `satisfies` maps fail the typecheck as well).
 */
interface Collection {
  name: string;
  entity: EntityTarget<ObjectLiteral>;
  resource: z.AnyZodObject;
  create: z.AnyZodObject;
  update?: z.AnyZodObject;
  updatable?: Readonly<Record<string, string>>;
  toResource: (row: never) => Record<string, unknown>;
  listQuery: object;
}

const COLLECTIONS: Collection[] = [
  {
    name: 'students',
    entity: Student,
    resource: StudentSchema,
    create: StudentCreateSchema,
    update: StudentUpdateSchema,
    updatable: STUDENT_UPDATABLE,
    toResource: toStudentResource,
    listQuery: contract.students.list.query,
  },
  {
    name: 'courses',
    entity: Course,
    resource: CourseSchema,
    create: CourseCreateSchema,
    update: CourseUpdateSchema,
    updatable: COURSE_UPDATABLE,
    toResource: toCourseResource,
    listQuery: contract.courses.list.query,
  },
  {
    name: 'enrollments',
    entity: Enrollment,
    resource: EnrollmentSchema,
    create: EnrollmentCreateSchema,
    update: EnrollmentUpdateSchema,
    updatable: ENROLLMENT_UPDATABLE,
    toResource: toEnrollmentResource,
    listQuery: contract.enrollments.list.query,
  },
  {
    name: 'payments',
    entity: Payment,
    resource: PaymentSchema,
    create: PaymentCreateSchema,
    toResource: toPaymentResource,
    listQuery: contract.payments.list.query,
  },
  {
    name: 'exams',
    entity: Exam,
    resource: ExamSchema,
    create: ExamCreateSchema,
    update: ExamUpdateSchema,
    updatable: EXAM_UPDATABLE,
    toResource: toExamResource,
    listQuery: contract.exams.list.query,
  },
  {
    name: 'exam results',
    entity: ExamResult,
    resource: ExamResultSchema,
    create: ExamResultCreateSchema,
    update: ExamResultUpdateSchema,
    updatable: EXAM_RESULT_UPDATABLE,
    toResource: toExamResultResource,
    listQuery: contract.examResults.list.query,
  },
];

/** A row with a distinct value in every column, of the column's kind. */
function sampleRow(metadata: EntityMetadata): Record<string, unknown> {
  const row: Record<string, unknown> = {};
  metadata.columns.forEach((column, index) => {
    const type = String(column.type);
    row[column.propertyName] =
      column.type === Date || /time/.test(type)
        ? new Date(Date.UTC(2026, 0, 1 + index))
        : /int|numeric|real|double|float/.test(type)
          ? index + 1
          : `${column.databaseName}-${index}`;
  });
  return row;
}

describe('contract fields of the domain resources', () => {
  let dir: string;
  let dataSource: DataSource;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'fields-'));
    dataSource = new DataSource(
      dataSourceOptions(
        loadConfig({ DATABASE_URL: `sqlite:${dir}/db.sqlite` }).database,
        APP_SCHEMA,
      ),
    );
    await dataSource.initialize();
  });
  afterAll(async () => {
    await dataSource.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  const columnNames = (entity: EntityTarget<ObjectLiteral>) =>
    new Set(dataSource.getMetadata(entity).columns.map((c) => c.databaseName));

  describe.each(COLLECTIONS.map((c) => [c.name, c] as const))('%s', (_name, collection) => {
    it('maps every field of the resource from the entity, and nothing else', () => {
      const metadata = dataSource.getMetadata(collection.entity);
      const resource = collection.toResource(sampleRow(metadata) as never);
      expect(Object.keys(resource).sort()).toEqual(Object.keys(collection.resource.shape).sort());
      // Every field but `object` is read from the column of the same name.
      const row = sampleRow(metadata);
      for (const field of Object.keys(collection.resource.shape)) {
        if (field === 'object') continue;
        const column = metadata.columns.find((c) => c.databaseName === field);
        expect(column && field).toBe(field);
        const stored = row[column!.propertyName];
        expect(resource[field]).toEqual(stored instanceof Date ? stored.toISOString() : stored);
      }
    });

    it('stores every field of the create body in the column of the same name', () => {
      const columns = columnNames(collection.entity);
      const missing = Object.keys(collection.create.shape).filter((field) => !columns.has(field));
      expect(missing).toEqual([]);
    });

    it('updates every field of the update body, into the column of the same name', () => {
      const update = collection.update;
      if (!update) {
        // No PATCH route: nothing may be declared updatable either.
        expect(collection.updatable).toBeUndefined();
        return;
      }
      const metadata = dataSource.getMetadata(collection.entity);
      expect(Object.keys(collection.updatable ?? {}).sort()).toEqual(
        Object.keys(update.shape).sort(),
      );
      for (const [field, property] of Object.entries(collection.updatable ?? {})) {
        expect(metadata.findColumnWithPropertyName(property)?.databaseName).toBe(field);
      }
    });

    it('lists by every field the list query filters, ranges over, sorts and searches', () => {
      const metadata = dataSource.getMetadata(collection.entity);
      const spec = listSpecOf(collection.listQuery)!;
      const fields = listFieldsFor(metadata, collection.listQuery);
      expect(Object.keys(fields.columns).sort()).toEqual(
        [
          ...new Set([...Object.keys(spec.filters), ...Object.keys(spec.ranges), ...spec.sort]),
        ].sort(),
      );
      for (const [field, property] of Object.entries(fields.columns)) {
        expect(metadata.findColumnWithPropertyName(property)?.databaseName).toBe(field);
      }
      expect(
        (fields.search ?? []).map((p) => metadata.findColumnWithPropertyName(p)?.databaseName),
      ).toEqual(spec.search ?? []);
    });
  });

  it('refuses a list field the entity has no column for', () => {
    const metadata = dataSource.getMetadata(Student);
    expect(() => listFieldsFor(metadata, contract.courses.list.query)).toThrow(
      "Student has no column for list field 'code'",
    );
  });
});
