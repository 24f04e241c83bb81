import { initContract } from '@ts-rest/core';
import { batchSchemas } from './batch';
import { EXTERNAL_ID, idSchema } from './ids';
import { filter, listQuery } from './list';
import { ROUTER_OPTIONS } from './operation';
import { searchErrorResponses } from './problem';
import {
  dateSchema,
  type DeleteRefusal,
  deletedSchema,
  externalIdField,
  externalIdSchema,
  text,
  timestampSchema,
} from './resource';
import { resourceRoutes } from './routes';
import { deleteRefusal } from './registry';
import { z } from './zod-openapi';

const c = initContract();

/** `draft` is being prepared, `active` takes enrollments, `archived` is closed to new ones. */
export const COURSE_STATUSES = ['draft', 'active', 'archived'] as const;
export type CourseStatus = (typeof COURSE_STATUSES)[number];

export const CourseSchema = z
  .object({
    id: idSchema('course'),
    object: z.literal('course'),
    external_id: externalIdField('courses'),
    code: z.string().describe('Short code, unique within the organization, e.g. `MATH-101`.'),
    title: z.string(),
    description: z.string().nullable(),
    status: z.enum(COURSE_STATUSES),
    start_date: dateSchema.nullable(),
    end_date: dateSchema.nullable(),
    capacity: z
      .number()
      .int()
      .nullable()
      .describe('Most live (pending or active) enrollments; null for no limit.'),
    created_at: timestampSchema,
    updated_at: timestampSchema,
  })
  .openapi({ title: 'Course' });

export type Course = z.infer<typeof CourseSchema>;

const courseFields = {
  external_id: externalIdSchema,
  code: text(32),
  title: text(200),
  description: text(5000).nullable(),
  status: z.enum(COURSE_STATUSES),
  start_date: dateSchema.nullable(),
  end_date: dateSchema.nullable(),
  capacity: z.number().int().min(1).max(1_000_000).nullable(),
};

export const CourseCreateSchema = z
  .object({
    external_id: courseFields.external_id.optional(),
    code: courseFields.code,
    title: courseFields.title,
    description: courseFields.description.optional(),
    status: courseFields.status.default('active'),
    start_date: courseFields.start_date.optional(),
    end_date: courseFields.end_date.optional(),
    capacity: courseFields.capacity.optional(),
  })
  .strict()
  .openapi({ title: 'CourseCreate' });

export const CourseUpdateSchema = z
  .object(courseFields)
  .partial()
  .strict()
  .openapi({ title: 'CourseUpdate' });

/** `POST /v1/courses/batch`: courses created or updated by `external_id`. */
export const CourseBatchSchemas = batchSchemas(CourseUpdateSchema, 'Course', {
  external_id: 'class-7731',
  code: 'MATH-101',
  title: 'Algebra I',
});

export const CourseListQuerySchema = listQuery({
  filters: {
    status: filter.oneOf(COURSE_STATUSES),
    code: filter.string(32),
    external_id: filter.string(EXTERNAL_ID.maxLength),
  },
  ranges: { start_date: 'date', end_date: 'date' },
  sort: ['code', 'title', 'start_date'],
  search: ['code', 'title'],
  tally: ['status'],
});

/** Enrollments and exams refer to a course; an archived course keeps them. */
export const COURSE_DELETE_REFUSAL: DeleteRefusal = deleteRefusal(
  'courses',
  "set its status to 'archived' instead",
);

const courseRoutes = resourceRoutes('/v1/courses', 'courses', CourseSchema);

export const coursesContract = c.router(
  {
    list: courseRoutes.list('List courses', CourseListQuerySchema, {
      errors: searchErrorResponses,
    }),
    create: courseRoutes.create({
      summary: 'Create a course',
      description:
        '`code`, and `external_id` when given, must be unique in the organization (409 otherwise); `end_date` may not precede `start_date`.',
      body: CourseCreateSchema,
    }),
    batchUpsert: courseRoutes.batch({
      summary: 'Create or update courses by external id',
      description:
        'Up to 1,000 items, each matched on `external_id`: created when no course has it, otherwise updated with the fields it sends (unchanged when they already hold). One result per item; an item a rule refuses fails alone. Sends an event for each course created or changed.',
      body: CourseBatchSchemas.body,
      response: CourseBatchSchemas.result,
    }),
    retrieve: courseRoutes.retrieve({ summary: 'Retrieve a course' }),
    update: courseRoutes.update({
      summary: 'Update a course',
      description:
        'Only the fields sent change. `capacity` cannot drop below the live enrollments (409).',
      body: CourseUpdateSchema,
    }),
    delete: courseRoutes.delete({
      summary: 'Delete a course',
      refusal: COURSE_DELETE_REFUSAL,
      response: deletedSchema('course', 'DeletedCourse'),
    }),
  },
  ROUTER_OPTIONS,
);
