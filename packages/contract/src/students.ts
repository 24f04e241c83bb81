import { initContract } from '@ts-rest/core';
import { idSchema } from './ids';
import { filter, listQuery, listResponse } from './list';
import { commonErrorResponses } from './problem';
import { operation } from './operation';
import { z } from './zod-openapi';

const c = initContract();

export const STUDENT_STATUSES = ['active', 'inactive', 'graduated', 'withdrawn'] as const;
export type StudentStatus = (typeof STUDENT_STATUSES)[number];

/** Grade levels follow K-12 numbering: 0 is kindergarten, 1-12 the grades. */
export const GRADE_LEVEL = { min: 0, max: 12 } as const;

export const StudentSchema = z
  .object({
    id: idSchema('student'),
    object: z.literal('student'),
    student_number: z
      .string()
      .describe('School-assigned student number, unique within the organization.'),
    first_name: z.string(),
    last_name: z.string(),
    preferred_name: z.string().nullable(),
    email: z.string().email().nullable(),
    date_of_birth: z.string().date().nullable().describe('YYYY-MM-DD'),
    status: z.enum(STUDENT_STATUSES),
    grade_level: z
      .number()
      .int()
      .min(GRADE_LEVEL.min)
      .max(GRADE_LEVEL.max)
      .nullable()
      .describe('0 is kindergarten, 1-12 the grades; null where grades do not apply.'),
    created_at: z.string().datetime(),
    updated_at: z.string().datetime(),
  })
  .openapi({ title: 'Student' });

export type Student = z.infer<typeof StudentSchema>;

export const StudentListQuerySchema = listQuery({
  filters: {
    status: filter.oneOf(STUDENT_STATUSES),
    grade_level: filter.integer(GRADE_LEVEL.min, GRADE_LEVEL.max),
  },
  ranges: {},
  sort: ['last_name', 'first_name'],
  search: ['first_name', 'last_name', 'email', 'student_number'],
});

export const StudentListSchema = listResponse(StudentSchema, 'StudentList');

export const studentsContract = c.router({
  list: {
    method: 'GET',
    path: '/v1/students',
    summary: 'List students',
    description:
      "Returns a page of the organization's students. Filters: `status`, `grade_level`; ranges on `created_at` and `updated_at`; `q` searches names, email and student number.",
    query: StudentListQuerySchema,
    responses: { 200: StudentListSchema, ...commonErrorResponses },
    metadata: operation({ scope: 'students:read', list: true }),
  },
});
