import { initContract } from '@ts-rest/core';
import { batchSchemas } from './batch';
import { EXTERNAL_ID, idSchema, referenceSchema } from './ids';
import { filter, listQuery } from './list';
import { ROUTER_OPTIONS } from './operation';
import { externalIdField, externalIdSchema, text, timestampSchema } from './resource';
import { z } from './zod-openapi';
import { resourceRoutes } from './routes';

const c = initContract();

export const ENROLLMENT_STATUSES = [
  'pending',
  'active',
  'completed',
  'dropped',
  'cancelled',
] as const;
export type EnrollmentStatus = (typeof ENROLLMENT_STATUSES)[number];

/** Pending and active enrollments are live: they hold a seat and block a second enrollment. */
export const LIVE_ENROLLMENT_STATUSES = [
  'pending',
  'active',
] as const satisfies readonly EnrollmentStatus[];

/**
 * The state machine: `pending → active → completed`, `pending | active → dropped`,
 * `pending → cancelled`. Each transition is its own operation, named by the state it enters.
 */
export const ENROLLMENT_TRANSITIONS = {
  activate: { to: 'active', from: ['pending'] },
  complete: { to: 'completed', from: ['active'] },
  drop: { to: 'dropped', from: ['pending', 'active'] },
  cancel: { to: 'cancelled', from: ['pending'] },
} as const satisfies Record<string, { to: EnrollmentStatus; from: readonly EnrollmentStatus[] }>;

export type EnrollmentTransition = keyof typeof ENROLLMENT_TRANSITIONS;

export const EnrollmentSchema = z
  .object({
    id: idSchema('enrollment'),
    object: z.literal('enrollment'),
    external_id: externalIdField('enrollments'),
    student_id: idSchema('student'),
    course_id: idSchema('course'),
    status: z.enum(ENROLLMENT_STATUSES),
    notes: z.string().nullable(),
    activated_at: timestampSchema.nullable(),
    completed_at: timestampSchema.nullable(),
    dropped_at: timestampSchema.nullable(),
    cancelled_at: timestampSchema.nullable(),
    created_at: timestampSchema,
    updated_at: timestampSchema,
  })
  .openapi({ title: 'Enrollment' });

export type Enrollment = z.infer<typeof EnrollmentSchema>;

/** Each writable field once: the create body adds defaults and optionality, the update is partial. */
const enrollmentFields = {
  external_id: externalIdSchema,
  notes: text(2000).nullable(),
};

export const EnrollmentCreateSchema = z
  .object({
    student_id: referenceSchema('student'),
    course_id: referenceSchema('course'),
    status: z
      .enum(['pending', 'active'])
      .default('pending')
      .describe('Start as `pending` (default) or directly `active`.'),
    notes: enrollmentFields.notes.optional(),
    external_id: enrollmentFields.external_id.optional(),
  })
  .strict()
  .openapi({ title: 'EnrollmentCreate' });

export const EnrollmentUpdateSchema = z
  .object(enrollmentFields)
  .partial()
  .strict()
  .openapi({ title: 'EnrollmentUpdate' });

/**
 * `POST /v1/enrollments/batch`: enrollments by `external_id`. `student_id` and `course_id` only
 * create; `status` creates (`pending` or `active`) or moves an existing enrollment to that state.
 */
export const EnrollmentBatchSchemas = batchSchemas(
  EnrollmentUpdateSchema,
  'Enrollment',
  {
    external_id: 'enr-7731-0042',
    student_id: 'ext:SIS-0042',
    course_id: 'ext:class-7731',
    status: 'active',
  },
  {
    student_id: EnrollmentCreateSchema.shape.student_id,
    course_id: EnrollmentCreateSchema.shape.course_id,
    status: z
      .enum(ENROLLMENT_STATUSES)
      .describe(
        "A new enrollment's first state (`pending` or `active`), or the state an existing one moves to along its transitions (409 when none leads there).",
      ),
  },
);

export const EnrollmentListQuerySchema = listQuery({
  filters: {
    student_id: filter.reference('student'),
    course_id: filter.reference('course'),
    status: filter.oneOf(ENROLLMENT_STATUSES),
    external_id: filter.string(EXTERNAL_ID.maxLength),
  },
  ranges: { activated_at: 'datetime', completed_at: 'datetime' },
  sort: ['status', 'activated_at', 'completed_at'],
  tally: ['status'],
});

const enrollmentRoutes = resourceRoutes('/v1/enrollments', 'enrollments', EnrollmentSchema);

function transitionRoute<const T extends EnrollmentTransition>(transition: T, summary: string) {
  const { to, from } = ENROLLMENT_TRANSITIONS[transition];
  return enrollmentRoutes.action(transition, {
    summary,
    description: `Moves the enrollment to \`${to}\` from ${from.map((s) => `\`${s}\``).join(' or ')}; any other current state is 409 \`invalid_state_transition\`. Sends \`enrollment.${to}\`.`,
    response: EnrollmentSchema,
  });
}

export const enrollmentsContract = c.router(
  {
    list: enrollmentRoutes.list('List enrollments', EnrollmentListQuerySchema),
    create: enrollmentRoutes.create({
      summary: 'Enroll a student in a course',
      description:
        '`external_id`, when given, must be unique in the organization. Refused with 409 when the student already holds a live (pending or active) enrollment in the course, when the course is full, or when the course is archived.',
      body: EnrollmentCreateSchema,
    }),
    batchUpsert: enrollmentRoutes.batch({
      summary: 'Create or update enrollments by external id',
      description:
        "Up to 1,000 items, each matched on `external_id`: created when no enrollment has it (with the create body's fields and rules: a free seat, one live enrollment per student and course, an open course, counted across the batch's own items too), otherwise updated with the fields it sends. `status` moves an existing enrollment along its transitions (sending `enrollment.<status>`; 409 when none leads there); `student_id` and `course_id` cannot change (409 when an item names others). One result per item; an item a rule refuses fails alone.",
      body: EnrollmentBatchSchemas.body,
      response: EnrollmentBatchSchemas.result,
    }),
    retrieve: enrollmentRoutes.retrieve({ summary: 'Retrieve an enrollment' }),
    update: enrollmentRoutes.update({
      summary: 'Update an enrollment',
      description:
        'Only `notes` and `external_id` can change here; the status changes through the transition operations.',
      body: EnrollmentUpdateSchema,
    }),
    activate: transitionRoute('activate', 'Activate an enrollment'),
    complete: transitionRoute('complete', 'Complete an enrollment'),
    drop: transitionRoute('drop', 'Drop an enrollment'),
    cancel: transitionRoute('cancel', 'Cancel an enrollment'),
  },
  ROUTER_OPTIONS,
);
