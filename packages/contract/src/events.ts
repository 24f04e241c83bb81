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
import { filter, listQuery } from './list';
import { ROUTER_OPTIONS } from './operation';
import { PaymentSchema } from './payments';
import { deletedSchema, timestampSchema } from './resource';
import type { Scope } from './scopes';
import { StudentSchema } from './students';
import { API_VERSION } from './version';
import { z } from './zod-openapi';
import { readRoutes } from './routes';

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

/**
 * The scope that reads each event's `data` (null: the event carries no resource). A webhook
 * endpoint may subscribe only to types whose scope the calling token holds, so `webhooks:write`
 * never reads more than the token could through the API. One entry per type, checked by the type
 * system, so a new event type cannot be added without saying who may receive it.
 */
export const EVENT_READ_SCOPES = {
  'student.created': 'students:read',
  'student.updated': 'students:read',
  'student.deleted': 'students:read',
  'course.created': 'courses:read',
  'course.updated': 'courses:read',
  'course.deleted': 'courses:read',
  'enrollment.created': 'enrollments:read',
  'enrollment.updated': 'enrollments:read',
  'enrollment.active': 'enrollments:read',
  'enrollment.completed': 'enrollments:read',
  'enrollment.dropped': 'enrollments:read',
  'enrollment.cancelled': 'enrollments:read',
  'payment.created': 'payments:read',
  'payment.succeeded': 'payments:read',
  'payment.failed': 'payments:read',
  'payment.refunded': 'payments:read',
  'exam.created': 'exam_results:read',
  'exam.updated': 'exam_results:read',
  'exam.deleted': 'exam_results:read',
  'exam_result.created': 'exam_results:read',
  'exam_result.updated': 'exam_results:read',
  'exam_result.published': 'exam_results:read',
  ping: null,
} as const satisfies Record<EventType, Scope | null>;

/**
 * The scopes a subscription to `types` needs: each type's read scope; `*` (every type, those
 * added later included) needs every scope any type needs. Sorted, without repeats.
 */
export function readScopesForEvents(types: readonly string[]): Scope[] {
  const all = Object.entries(EVENT_READ_SCOPES) as [EventType, Scope | null][];
  const needed = all
    .filter(([type]) => types.includes('*') || types.includes(type))
    .map(([, scope]) => scope)
    .filter((scope): scope is Scope => scope !== null);
  return [...new Set(needed)].sort();
}

export type EventData<T extends EventType> = z.infer<(typeof EVENT_CATALOG)[T]>;

/** The name of an event type's schema in the OpenAPI document and the SDKs: `StudentCreatedEvent`. */
export function eventSchemaName(type: EventType): string {
  const pascal = type
    .split(/[._]/)
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join('');
  return `${pascal}Event`;
}

function eventSchema<const T extends EventType>(type: T) {
  return z
    .object({
      id: idSchema('event'),
      object: z.literal('event'),
      type: z.literal(type),
      timestamp: timestampSchema.describe('When the change happened.'),
      api_version: z.literal(API_VERSION),
      data: EVENT_CATALOG[type],
    })
    .openapi({ title: eventSchemaName(type) });
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
});

const eventRoutes = readRoutes('/v1/events', 'events', EventSchema);

export const eventsContract = c.router(
  {
    list: eventRoutes.list('List events', EventListQuerySchema, {
      description: `Every change of the last ${EVENT_RETENTION_DAYS} days, newest first, so you can reconcile what a webhook endpoint missed. Filter by \`type\` (comma-separate several) and \`created_at\` range; \`updated_since\` works as on every collection (events never change after they are written).`,
    }),
    retrieve: eventRoutes.retrieve({ summary: 'Retrieve an event' }),
  },
  ROUTER_OPTIONS,
);
