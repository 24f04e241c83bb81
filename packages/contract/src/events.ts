/**
 * The catalogue of event types, each with the schema of its `data` (the resource as the API
 * returns it). Webhook payloads and `GET /v1/events` items are `Event`s, so the SDK can type a
 * received event by narrowing on `type`.
 */
import { CourseSchema } from './courses';
import { EnrollmentSchema } from './enrollments';
import { ExamResultSchema, ExamSchema } from './exams';
import { idSchema } from './ids';
import { PaymentSchema } from './payments';
import { deletedSchema, timestampSchema } from './resource';
import { StudentSchema } from './students';
import { API_VERSION } from './version';
import { z } from './zod-openapi';

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
