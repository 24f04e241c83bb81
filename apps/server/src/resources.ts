/**
 * The server's side of the resource registry (`packages/contract/src/registry.ts`): for each
 * resource, the entity that stores it, the Nest module that serves it and the module's tables.
 * The application's modules (`app.module.ts`), its schema (`schema.ts`), the exports' and
 * checksums' collection sources and the field checks are derived from it; the contract's routes
 * give the resource, body and list-query schemas. See docs/adding-a-resource.md.
 */
import type { Type } from '@nestjs/common';
import {
  contract,
  RESOURCE_NAMES,
  RESOURCES,
  resourceContractKey,
  type ResourceName,
} from '@platform/contract';
import type { EntityTarget, ObjectLiteral } from 'typeorm';
import type { z } from 'zod';
import { Course } from './courses/course.entity';
import { CoursesModule } from './courses/courses.module';
import { COURSES_SCHEMA } from './courses/courses.schema';
import type { ModuleSchema } from './database/module-schema';
import { Enrollment } from './enrollments/enrollment.entity';
import { EnrollmentsModule } from './enrollments/enrollments.module';
import { ENROLLMENTS_SCHEMA } from './enrollments/enrollments.schema';
import { ExamResult } from './exams/exam-result.entity';
import { Exam } from './exams/exam.entity';
import { ExamsModule } from './exams/exams.module';
import { EXAMS_SCHEMA } from './exams/exams.schema';
import { Payment } from './payments/payment.entity';
import { PaymentsModule } from './payments/payments.module';
import { PAYMENTS_SCHEMA } from './payments/payments.schema';
import { Student } from './students/student.entity';
import { StudentsModule } from './students/students.module';
import { STUDENTS_SCHEMA } from './students/students.schema';

export interface ServerResource {
  /** The TypeORM entity of its table. */
  entity: EntityTarget<ObjectLiteral>;
  /** The Nest module that serves its routes (one module may serve several resources). */
  module: Type;
  /** The module's entities and migrations (`<module>.schema.ts`). */
  schema: ModuleSchema;
}

export const SERVER_RESOURCES = {
  students: { entity: Student, module: StudentsModule, schema: STUDENTS_SCHEMA },
  courses: { entity: Course, module: CoursesModule, schema: COURSES_SCHEMA },
  enrollments: { entity: Enrollment, module: EnrollmentsModule, schema: ENROLLMENTS_SCHEMA },
  payments: { entity: Payment, module: PaymentsModule, schema: PAYMENTS_SCHEMA },
  exams: { entity: Exam, module: ExamsModule, schema: EXAMS_SCHEMA },
  exam_results: { entity: ExamResult, module: ExamsModule, schema: EXAMS_SCHEMA },
} as const satisfies Record<ResourceName, ServerResource>;

/**
 * Every resource, each before the resources it refers to (the registry's `references`): the
 * order in which an organization's records can be deleted without tripping a foreign key.
 */
export function resourcesReferrersFirst(): ResourceName[] {
  const ordered: ResourceName[] = [];
  const visit = (name: ResourceName, path: readonly ResourceName[]) => {
    if (ordered.includes(name)) return;
    if (path.includes(name)) {
      throw new Error(`The registry's references form a loop: ${[...path, name].join(' → ')}`);
    }
    for (const other of RESOURCE_NAMES) {
      const references: readonly string[] = RESOURCES[other].references;
      if (references.includes(name)) visit(other, [...path, name]);
    }
    ordered.push(name);
  };
  for (const name of RESOURCE_NAMES) visit(name, []);
  return ordered;
}

/** Each resource module once, in the registry's order. */
export const RESOURCE_MODULES: readonly Type[] = [
  ...new Set(RESOURCE_NAMES.map((name) => SERVER_RESOURCES[name].module)),
];

/** Each resource module's schema once, in the registry's order. */
export const RESOURCE_SCHEMAS: readonly ModuleSchema[] = [
  ...new Set(RESOURCE_NAMES.map((name) => SERVER_RESOURCES[name].schema)),
];

/** What the contract's routes say of a resource: its schema, bodies and list query. */
export interface ResourceSchemas {
  resource: z.AnyZodObject;
  create: z.AnyZodObject;
  /** Absent where the resource changes only through actions (payments). */
  update?: z.AnyZodObject;
  listQuery: z.ZodTypeAny;
}

export function resourceSchemas(name: ResourceName): ResourceSchemas {
  const routes = contract[resourceContractKey(name)] as unknown as Record<
    string,
    { body?: unknown; query?: unknown; responses: Record<number, unknown> }
  >;
  const route = (key: string) => {
    const found = routes[key];
    if (!found) throw new Error(`contract.${resourceContractKey(name)} has no ${key} route`);
    return found;
  };
  return {
    resource: route('retrieve').responses[200] as z.AnyZodObject,
    create: route('create').body as z.AnyZodObject,
    ...(routes.update && { update: routes.update.body as z.AnyZodObject }),
    listQuery: route('list').query as z.ZodTypeAny,
  };
}
