import { initContract } from '@ts-rest/core';
import { batchSchemas } from './batch';
import { EXTERNAL_ID, idSchema, referenceSchema } from './ids';
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
import { deleteRefusal } from './registry';
import { z } from './zod-openapi';
import { resourceRoutes } from './routes';

const c = initContract();

const scoreSchema = z.number().finite().min(0, 'must be at least 0').max(1_000_000);

export const ExamSchema = z
  .object({
    id: idSchema('exam'),
    object: z.literal('exam'),
    external_id: externalIdField('exams'),
    course_id: idSchema('course'),
    title: z.string(),
    max_score: z.number().describe('The highest score a result can have.'),
    held_on: dateSchema.nullable(),
    created_at: timestampSchema,
    updated_at: timestampSchema,
  })
  .openapi({ title: 'Exam' });

export type Exam = z.infer<typeof ExamSchema>;

/** Each writable field once: the create body adds the course and optionality, the update is partial. */
const examFields = {
  external_id: externalIdSchema,
  title: text(200),
  max_score: scoreSchema.positive('must be positive'),
  held_on: dateSchema.nullable(),
};

export const ExamCreateSchema = z
  .object({
    course_id: referenceSchema('course'),
    ...examFields,
    held_on: examFields.held_on.optional(),
    external_id: examFields.external_id.optional(),
  })
  .strict()
  .openapi({ title: 'ExamCreate' });

export const ExamUpdateSchema = z
  .object(examFields)
  .partial()
  .strict()
  .openapi({ title: 'ExamUpdate' });

/** `POST /v1/exams/batch`: exams created or updated by `external_id`; `course_id` only creates. */
export const ExamBatchSchemas = batchSchemas(
  ExamUpdateSchema,
  'Exam',
  { external_id: 'midterm-7731', course_id: 'ext:class-7731', title: 'Midterm', max_score: 100 },
  { course_id: ExamCreateSchema.shape.course_id },
);

export const EXAM_RESULT_STATUSES = ['draft', 'published'] as const;
export type ExamResultStatus = (typeof EXAM_RESULT_STATUSES)[number];

export const ExamResultSchema = z
  .object({
    id: idSchema('exam_result'),
    object: z.literal('exam_result'),
    external_id: externalIdField('exam results'),
    exam_id: idSchema('exam'),
    student_id: idSchema('student'),
    score: z.number(),
    grade: z.string().nullable().describe('Your grading scale, e.g. `A-` or `6`.'),
    status: z.enum(EXAM_RESULT_STATUSES),
    published_at: timestampSchema.nullable(),
    created_at: timestampSchema,
    updated_at: timestampSchema,
  })
  .openapi({ title: 'ExamResult' });

export type ExamResult = z.infer<typeof ExamResultSchema>;

/** Each writable field once: the create body adds the references and optionality. */
const examResultFields = {
  external_id: externalIdSchema,
  score: scoreSchema,
  grade: text(16).nullable(),
};

export const ExamResultCreateSchema = z
  .object({
    exam_id: referenceSchema('exam'),
    student_id: referenceSchema('student'),
    ...examResultFields,
    grade: examResultFields.grade.optional(),
    external_id: examResultFields.external_id.optional(),
  })
  .strict()
  .openapi({ title: 'ExamResultCreate' });

export const ExamResultUpdateSchema = z
  .object(examResultFields)
  .partial()
  .strict()
  .openapi({ title: 'ExamResultUpdate' });

/** `POST /v1/exam_results/batch`: results by `external_id`; `exam_id` and `student_id` only create. */
export const ExamResultBatchSchemas = batchSchemas(
  ExamResultUpdateSchema,
  'ExamResult',
  {
    external_id: 'grade-7731-0042',
    exam_id: 'ext:midterm-7731',
    student_id: 'ext:SIS-0042',
    score: 87.5,
    grade: 'B+',
  },
  {
    exam_id: ExamResultCreateSchema.shape.exam_id,
    student_id: ExamResultCreateSchema.shape.student_id,
  },
);

export const ExamListQuerySchema = listQuery({
  filters: {
    course_id: filter.reference('course'),
    external_id: filter.string(EXTERNAL_ID.maxLength),
  },
  ranges: { held_on: 'date' },
  sort: ['title', 'held_on'],
  search: ['title'],
  tally: [],
});

export const ExamResultListQuerySchema = listQuery({
  filters: {
    exam_id: filter.reference('exam'),
    student_id: filter.reference('student'),
    status: filter.oneOf(EXAM_RESULT_STATUSES),
    external_id: filter.string(EXTERNAL_ID.maxLength),
  },
  ranges: { published_at: 'datetime' },
  sort: ['score', 'published_at'],
  tally: ['status'],
});

/** Results refer to their exam and are part of the record. */
export const EXAM_DELETE_REFUSAL: DeleteRefusal = deleteRefusal(
  'exams',
  'results are part of the record and are kept',
);

const examRoutes = resourceRoutes('/v1/exams', 'exam_results', ExamSchema);

export const examsContract = c.router(
  {
    list: examRoutes.list('List exams', ExamListQuerySchema, { errors: searchErrorResponses }),
    create: examRoutes.create({
      summary: 'Create an exam for a course',
      body: ExamCreateSchema,
    }),
    batchUpsert: examRoutes.batch({
      summary: 'Create or update exams by external id',
      description:
        "Up to 1,000 items, each matched on `external_id`: created when no exam has it (with the create body's fields, `course_id` included), otherwise updated with the fields it sends (unchanged when they already hold). An exam's `course_id` cannot change: sent for an existing exam, it must name its course (409 otherwise). One result per item; an item a rule refuses fails alone. Sends an event for each exam created or changed.",
      body: ExamBatchSchemas.body,
      response: ExamBatchSchemas.result,
    }),
    retrieve: examRoutes.retrieve({ summary: 'Retrieve an exam' }),
    update: examRoutes.update({
      summary: 'Update an exam',
      description: '`max_score` cannot drop below a score already recorded (409).',
      body: ExamUpdateSchema,
    }),
    delete: examRoutes.delete({
      summary: 'Delete an exam',
      refusal: EXAM_DELETE_REFUSAL,
      response: deletedSchema('exam', 'DeletedExam'),
    }),
  },
  ROUTER_OPTIONS,
);

const examResultRoutes = resourceRoutes('/v1/exam_results', 'exam_results', ExamResultSchema);

export const examResultsContract = c.router(
  {
    list: examResultRoutes.list('List exam results', ExamResultListQuerySchema),
    create: examResultRoutes.create({
      summary: 'Record an exam result (as a draft)',
      description:
        "One result per student per exam (409 otherwise). The student must hold an active or completed enrollment in the exam's course, and `score` may not exceed the exam's `max_score` (400).",
      body: ExamResultCreateSchema,
    }),
    batchUpsert: examResultRoutes.batch({
      summary: 'Record or correct exam results by external id',
      description:
        "Up to 1,000 items, each matched on `external_id`: a new result (a draft, with the create body's rules: an enrolled student, one result per student per exam, `score` within `max_score`) when none has it, otherwise the fields it sends, as an update. A result's `exam_id` and `student_id` cannot change (409 when an item names others). One result per item; an item a rule refuses fails alone. Sends an event for each result recorded or changed.",
      body: ExamResultBatchSchemas.body,
      response: ExamResultBatchSchemas.result,
    }),
    retrieve: examResultRoutes.retrieve({ summary: 'Retrieve an exam result' }),
    update: examResultRoutes.update({
      summary: 'Update or correct an exam result',
      description:
        'Drafts and published results alike; a correction of a published result sends `exam_result.updated`.',
      body: ExamResultUpdateSchema,
    }),
    publish: examResultRoutes.action('publish', {
      summary: 'Publish an exam result',
      description: '`draft → published`. Sends `exam_result.published`.',
    }),
  },
  ROUTER_OPTIONS,
);
