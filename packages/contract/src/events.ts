/**
 * The catalogue of event types, each with the schema of its `data` (the resource as the API
 * returns it). Webhook payloads and `GET /v1/events` items are `Event`s, so the SDK can type a
 * received event by narrowing on `type`.
 */
import { initContract } from '@ts-rest/core';
import { CourseSchema } from './courses';
import { EnrollmentSchema } from './enrollments';
import { ExamResultSchema, ExamSchema } from './exams';
import { idSchema } from './ids';
import { filter, listQuery, listResponse } from './list';
import { operation, ROUTER_OPTIONS } from './operation';
import { PaymentSchema } from './payments';
import { commonErrorResponses } from './problem';
import { deletedSchema, IdPathParams, readErrorResponses, timestampSchema } from './resource';
import { StudentSchema } from './students';
import { API_VERSION } from './version';
import { z } from './zod-openapi';

const c = initContract();

export const EVENT_CATALOG = {
  'student.created': StudentSchema,
  'student.updated': StudentSchema,
  'student.deleted': deletedSchema('student', 'DeletedStudent'),
  'course.created': CourseSchema,
  'course.updated': CourseSchema,
  'course.deleted': deletedSchema('course', 'DeletedCourse'),
  'enrollment.created': EnrollmentSchema,
  'enrollment.updated': EnrollmentSchema,
  'enrollment.active': EnrollmentSchema,
  'enrollment.completed': EnrollmentSchema,
  'enrollment.dropped': EnrollmentSchema,
  'enrollment.cancelled': EnrollmentSchema,
  'payment.created': PaymentSchema,
  'payment.succeeded': PaymentSchema,
  'payment.failed': PaymentSchema,
  'payment.refunded': PaymentSchema,
  'exam.created': ExamSchema,
  'exam.updated': ExamSchema,
  'exam.deleted': deletedSchema('exam', 'DeletedExam'),
  'exam_result.created': ExamResultSchema,
  'exam_result.updated': ExamResultSchema,
  'exam_result.published': ExamResultSchema,
  ping: z.object({ message: z.string() }).openapi({ title: 'Ping' }),
} as const;

export type EventType = keyof typeof EVENT_CATALOG;
export const EVENT_TYPES = Object.keys(EVENT_CATALOG) as [EventType, ...EventType[]];

export type EventData<T extends EventType> = z.infer<(typeof EVENT_CATALOG)[T]>;

function eventSchema<const T extends EventType>(type: T) {
  return z.object({
    id: idSchema('event'),
    object: z.literal('event'),
    type: z.literal(type),
    timestamp: timestampSchema.describe('When the change happened.'),
    api_version: z.literal(API_VERSION),
    data: EVENT_CATALOG[type],
  });
}

type EventSchemaOf<T extends EventType> = ReturnType<typeof eventSchema<T>>;
type EventSchemas = { [T in EventType]: EventSchemaOf<T> }[EventType];

/** Any event: a discriminated union on `type`. */
export const EventSchema = z
  .discriminatedUnion(
    'type',
    EVENT_TYPES.map((type) => eventSchema(type)) as unknown as [
      EventSchemas,
      EventSchemas,
      ...EventSchemas[],
    ],
  )
  .openapi({ title: 'Event' });

export type Event = { [T in EventType]: z.infer<EventSchemaOf<T>> }[EventType];
export type EventOf<T extends EventType> = Extract<Event, { type: T }>;

/** How long events stay readable through the API (and deliverable for reconciliation). */
export const EVENT_RETENTION_DAYS = 30;

export const EventListQuerySchema = listQuery({
  filters: { type: filter.oneOf(EVENT_TYPES) },
  ranges: {},
  sort: [],
});

export const eventsContract = c.router(
  {
    list: {
      method: 'GET',
      path: '/v1/events',
      summary: 'List events',
      description: `Every change of the last ${EVENT_RETENTION_DAYS} days, newest first, so you can reconcile what a webhook endpoint missed. Filter by \`type\` (comma-separate several) and \`created_at\` range; \`updated_since\` works as on every collection (events never change after they are written).`,
      query: EventListQuerySchema,
      responses: { 200: listResponse(EventSchema, 'EventList'), ...commonErrorResponses },
      metadata: operation({ scope: 'events:read', list: true }),
    },
    retrieve: {
      method: 'GET',
      path: '/v1/events/:id',
      summary: 'Retrieve an event',
      pathParams: IdPathParams,
      responses: { 200: EventSchema, ...readErrorResponses },
      metadata: operation({ scope: 'events:read' }),
    },
  },
  ROUTER_OPTIONS,
);
