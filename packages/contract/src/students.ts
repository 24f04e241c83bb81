import { initContract } from '@ts-rest/core';
import { batchSchemas } from './batch';
import { EXTERNAL_ID, idSchema } from './ids';
import { filter, listQuery, listResponse } from './list';
import { searchErrorResponses } from './problem';
import {
  dateSchema,
  type DeleteRefusal,
  deletedSchema,
  externalIdField,
  externalIdSchema,
  text,
} from './resource';
import { ROUTER_OPTIONS } from './operation';
import { deleteRefusal } from './registry';
import { z } from './zod-openapi';
import { resourceRoutes } from './routes';

const c = initContract();

export const STUDENT_STATUSES = ['active', 'inactive', 'graduated', 'withdrawn'] as const;
export type StudentStatus = (typeof STUDENT_STATUSES)[number];

/** Grade levels follow K-12 numbering: 0 is kindergarten, 1-12 the grades. */
export const GRADE_LEVEL = { min: 0, max: 12 } as const;

export const StudentSchema = z
  .object({
    id: idSchema('student'),
    object: z.literal('student'),
    external_id: externalIdField('students'),
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
    external_id: filter.string(EXTERNAL_ID.maxLength),
  },
  sort: ['last_name', 'first_name'],
  search: ['first_name', 'last_name', 'email', 'student_number'],
  tally: ['status'],
});

export const StudentListSchema = listResponse(StudentSchema, 'StudentList');

/** Each writable field once: the create body adds defaults and optionality, the update is partial. */
const studentFields = {
  external_id: externalIdSchema,
  student_number: text(64),
  first_name: text(100),
  last_name: text(100),
  preferred_name: text(100).nullable(),
  email: z.string().email('must be an email address').max(254).nullable(),
  date_of_birth: dateSchema.nullable(),
  status: z.enum(STUDENT_STATUSES),
  grade_level: z.number().int().min(GRADE_LEVEL.min).max(GRADE_LEVEL.max).nullable(),
};

export const StudentCreateSchema = z
  .object({
    ...studentFields,
    external_id: studentFields.external_id.optional(),
    preferred_name: studentFields.preferred_name.optional(),
    email: studentFields.email.optional(),
    date_of_birth: studentFields.date_of_birth.optional(),
    status: studentFields.status.default('active'),
    grade_level: studentFields.grade_level.optional(),
  })
  .strict()
  .openapi({ title: 'StudentCreate' });

export const StudentUpdateSchema = z
  .object(studentFields)
  .partial()
  .strict()
  .openapi({ title: 'StudentUpdate' });

/** `POST /v1/students/batch`: students created or updated by `external_id`. */
export const StudentBatchSchemas = batchSchemas(StudentUpdateSchema, 'Student', {
  external_id: 'SIS-0042',
  student_number: 'S-2026-0042',
  first_name: 'Ana',
  last_name: 'Silva',
});

export const DeletedStudentSchema = deletedSchema('student', 'DeletedStudent');

/** What refers to a student; a withdrawn student keeps the record. */
export const STUDENT_DELETE_REFUSAL: DeleteRefusal = deleteRefusal(
  'students',
  "set its status to 'withdrawn' instead, which keeps the record",
);

const studentRoutes = resourceRoutes('/v1/students', 'students', StudentSchema);

export const studentsContract = c.router(
  {
    list: studentRoutes.list('List students', StudentListQuerySchema, {
      lead: "Returns a page of the organization's students.",
      errors: searchErrorResponses,
    }),
    create: studentRoutes.create({
      summary: 'Create a student',
      description:
        '`student_number`, and `external_id` when given, must be unique in the organization (409 otherwise).',
      body: StudentCreateSchema,
    }),
    batchUpsert: studentRoutes.batch({
      summary: 'Create or update students by external id',
      description:
        'Up to 1,000 items, each matched on `external_id`: created when no student has it, otherwise updated with the fields it sends (unchanged when they already hold). One result per item; an item a rule refuses fails alone. Sends an event for each student created or changed.',
      body: StudentBatchSchemas.body,
      response: StudentBatchSchemas.result,
    }),
    retrieve: studentRoutes.retrieve({ summary: 'Retrieve a student' }),
    update: studentRoutes.update({
      summary: 'Update a student',
      description: 'Only the fields sent change. Sends `student.updated` when something changed.',
      body: StudentUpdateSchema,
    }),
    delete: studentRoutes.delete({
      summary: 'Delete a student',
      refusal: STUDENT_DELETE_REFUSAL,
      response: DeletedStudentSchema,
    }),
  },
  ROUTER_OPTIONS,
);
