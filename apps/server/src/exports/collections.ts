import {
  contract,
  CourseSchema,
  EnrollmentSchema,
  ExamResultSchema,
  ExamSchema,
  type ExportCollection,
  PaymentSchema,
  StudentSchema,
} from '@platform/contract';
import type { DataSource, EntityTarget, ObjectLiteral } from 'typeorm';
import type { z } from 'zod';
import { resourceMapper } from '../common/resource-fields';
import { Course } from '../courses/course.entity';
import { Enrollment } from '../enrollments/enrollment.entity';
import { ExamResult } from '../exams/exam-result.entity';
import { Exam } from '../exams/exam.entity';
import { Payment } from '../payments/payment.entity';
import { Student } from '../students/student.entity';

/** What an export or a checksum reads of one collection. */
export interface CollectionSource {
  entity: EntityTarget<ObjectLiteral>;
  resource: z.AnyZodObject;
  /** The contract's list query: the filters an export accepts. */
  listQuery: z.ZodTypeAny;
}

export const COLLECTION_SOURCES: Readonly<Record<ExportCollection, CollectionSource>> = {
  students: { entity: Student, resource: StudentSchema, listQuery: contract.students.list.query },
  courses: { entity: Course, resource: CourseSchema, listQuery: contract.courses.list.query },
  enrollments: {
    entity: Enrollment,
    resource: EnrollmentSchema,
    listQuery: contract.enrollments.list.query,
  },
  payments: { entity: Payment, resource: PaymentSchema, listQuery: contract.payments.list.query },
  exams: { entity: Exam, resource: ExamSchema, listQuery: contract.exams.list.query },
  exam_results: {
    entity: ExamResult,
    resource: ExamResultSchema,
    listQuery: contract.examResults.list.query,
  },
};

/** A raw row of `entity` as its API resource, through the driver's own value conversion. */
export function rowMapper(
  dataSource: DataSource,
  source: CollectionSource,
): (row: Record<string, unknown>) => Record<string, unknown> {
  const metadata = dataSource.getMetadata(source.entity);
  const toResource = resourceMapper<Record<string, unknown>, Record<string, unknown>>(
    metadata,
    source.resource,
  );
  const driver = dataSource.driver;
  const columns = metadata.columns;
  return (row) => {
    const entity: Record<string, unknown> = {};
    for (const column of columns) {
      entity[column.propertyName] = driver.prepareHydratedValue(row[column.databaseName], column);
    }
    return toResource(entity);
  };
}
