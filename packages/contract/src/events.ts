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
import { filter, type FilterInput, filterParam, integerParam, listQuery } from './list';
import { operation, ROUTER_OPTIONS } from './operation';
import { commonErrorResponses, problemResponse } from './problem';
import { PaymentSchema } from './payments';
import { deletedSchema, timestampSchema } from './resource';
import type { Scope } from './scopes';
import { StudentSchema } from './students';
import { API_VERSION } from './version';
import { z } from './zod-openapi';
import { readRoutes } from './routes';
import { RESOURCE_EVENT_READ_SCOPES, type ResourceEventType } from './registry';

const c = initContract();

/** One entry per event type the registry declares (`registry.ts`), checked by the type system. */
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
} as const satisfies Record<ResourceEventType | 'ping', z.ZodTypeAny>;

export type EventType = keyof typeof EVENT_CATALOG;
export const EVENT_TYPES = Object.keys(EVENT_CATALOG) as [EventType, ...EventType[]];

/**
 * The scope that reads each event's `data` (null: the event carries no resource). A webhook
 * endpoint may subscribe only to types whose scope the calling token holds, so `webhooks:write`
 * never reads more than the token could through the API. One entry per type, checked by the type
 * system; a resource's events read with the resource's scope (`registry.ts`).
 */
export const EVENT_READ_SCOPES = {
  ...RESOURCE_EVENT_READ_SCOPES,
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

/**
 * Whether a caller holding `scopes` may read an event of `type`: it needs the type's read scope
 * (`EVENT_READ_SCOPES`; `ping` carries no resource). The one rule every read of an event follows
 * (list, by id, the change feed, webhook deliveries); an unknown type is never readable.
 */
export function canReadEventType(scopes: ReadonlySet<string>, type: string): boolean {
  if (!Object.hasOwn(EVENT_READ_SCOPES, type)) return false;
  const scope = EVENT_READ_SCOPES[type as EventType];
  return scope === null || scopes.has(scope);
}

/** The event types a caller holding `scopes` may read (see `canReadEventType`). */
export function readableEventTypes(scopes: ReadonlySet<string>): EventType[] {
  return EVENT_TYPES.filter((type) => canReadEventType(scopes, type));
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

/**
 * The event types that record a change to an existing resource: `*.updated` and the status
 * transitions (`enrollment.active`, `payment.refunded`, `exam_result.published`, …). Each carries
 * `previous_attributes`; a `*.created`, a `*.deleted` and a `ping` do not.
 */
export type UpdateEventType = Exclude<
  EventType,
  `${string}.created` | `${string}.deleted` | 'ping'
>;

export function isUpdateEventType(type: string): type is UpdateEventType {
  return (
    Object.hasOwn(EVENT_CATALOG, type) &&
    type !== 'ping' &&
    !type.endsWith('.created') &&
    !type.endsWith('.deleted')
  );
}

export const UPDATE_EVENT_TYPES = EVENT_TYPES.filter(isUpdateEventType);

type Catalog = typeof EVENT_CATALOG;
type PartialShape<S extends z.ZodRawShape> = { [K in keyof S]: z.ZodOptional<S[K]> };
type PreviousAttributesSchema<T extends UpdateEventType> = z.ZodNullable<
  z.ZodObject<PartialShape<Catalog[T]['shape']>>
>;

/** One schema per resource (its update types share it): `StudentPreviousAttributes`. */
const previousAttributesSchemas = new Map<z.AnyZodObject, z.ZodTypeAny>();

function previousAttributesSchema<T extends UpdateEventType>(type: T): PreviousAttributesSchema<T> {
  const resource = EVENT_CATALOG[type] as z.AnyZodObject;
  let schema = previousAttributesSchemas.get(resource);
  if (!schema) {
    const title = eventSchemaName(type).replace(/[A-Z][a-z]*Event$/, 'PreviousAttributes');
    schema = resource
      .partial()
      .openapi({
        title,
        description:
          'What the change modified: each top-level field of `data` whose value changed, with its value before the change (a changed field is given whole); the fields it left alone are absent. `updated_at` is among them, since every change moves it. Null (instead of this object) on an event recorded before the API kept previous values.',
      })
      .nullable();
    previousAttributesSchemas.set(resource, schema);
  }
  return schema as PreviousAttributesSchema<T>;
}

function envelopeSchema<const T extends EventType>(type: T) {
  return z.object({
    id: idSchema('event'),
    position: z
      .number()
      .int()
      .positive()
      .nullable()
      .describe(
        "The event's place in its organization's change feed: 1, 2, 3, … in commit order, the same in `GET /v1/changes` and in every webhook delivery (also sent as the `webhook-position` header). A webhook delivery also carries `previous_position`, which tells a gap for an endpoint of any subscription. Null for a `ping`, which is not a change.",
      ),
    cursor: z
      .string()
      .nullable()
      .describe(
        "The feed cursor just after this event: pass it as `after` to read the changes that follow it, or as `until` to read up to it. Opaque and bound to its organization (another organization's is a 400); the number before the dot is `position`. Null for a `ping`.",
      ),
    previous_position: z
      .number()
      .int()
      .positive()
      .nullable()
      .optional()
      .describe(
        "Only in a webhook delivery of a change (also sent as the `webhook-previous-position` header, left out when null): the position of the change delivered to this endpoint before this one, the previous change of the types it subscribes to. Null for the first change of its chain (the chain starts when the endpoint is created or its `events` change). If it is not the position of the last change you applied from this endpoint, you missed deliveries: read `GET /v1/changes?after=<the cursor of the last change you applied>&until=<this delivery's cursor>&type=<your subscribed types>`. Not in `GET /v1/events` or the change feed, nor in a `ping`.",
      ),
    object: z.literal('event'),
    type: z.literal(type),
    timestamp: timestampSchema.describe('When the change happened.'),
    api_version: z.literal(API_VERSION),
    data: EVENT_CATALOG[type],
  });
}

type EnvelopeSchema<T extends EventType> = ReturnType<typeof envelopeSchema<T>>;
type EventSchemaOf<T extends EventType> = T extends UpdateEventType
  ? z.ZodObject<EnvelopeSchema<T>['shape'] & { previous_attributes: PreviousAttributesSchema<T> }>
  : EnvelopeSchema<T>;

/**
 * An event of `type`: the envelope around its `data`, and for an update type
 * (`isUpdateEventType`) its `previous_attributes`.
 */
function eventSchema<const T extends EventType>(type: T): EventSchemaOf<T> {
  const envelope = envelopeSchema(type);
  const schema = isUpdateEventType(type)
    ? envelope.extend({ previous_attributes: previousAttributesSchema(type) })
    : envelope;
  return schema.openapi({ title: eventSchemaName(type) }) as unknown as EventSchemaOf<T>;
}

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

/** The change feed's bounds: items per read, and how long a read may wait for a change. */
export const FEED_LIMITS = { defaultLimit: 100, maxLimit: 1000, maxWaitSeconds: 30 } as const;

/** The types the feed carries: every change (a `ping` is not one). */
export type ChangeType = Exclude<EventType, 'ping'>;
const CHANGE_TYPES = filter.oneOf(
  EVENT_TYPES.filter((type) => type !== 'ping') as [ChangeType, ...ChangeType[]],
);

/** A cursor as the API issues it (`42.Xk3…`: the position, a dot, the organization's tag), or `0`. */
const CURSOR_PATTERN = /^(0|(0|[1-9][0-9]{0,17})\.[A-Za-z0-9_-]{10})$/;

/** `after=oldest`: start from the oldest change still kept, which is never `cursor_expired`. */
export const OLDEST_CURSOR = 'oldest';

export const ChangesQuerySchema = z
  .object({
    after: z
      .string()
      .refine((value) => value === OLDEST_CURSOR || CURSOR_PATTERN.test(value), {
        message:
          "after must be a cursor this API returned (a `next_cursor`, an export's `cursor`, or an event's `cursor`, not its `position`), `0` or `oldest`",
      })
      .optional()
      .openapi({
        description:
          "Read the changes after this cursor: a `next_cursor` from the previous read, an export's `cursor`, or the `cursor` of the last event you applied. Cursors are bound to their organization: another organization's is a 400. `oldest` starts from the oldest change still kept (never a 410). `0` (or omitted) is the start of the feed: a 410 `cursor_expired` once the organization's first changes are older than the retention.",
        example: 'oldest',
      }),
    until: z
      .string()
      .regex(
        CURSOR_PATTERN,
        "until must be a cursor this API returned (a `next_cursor`, an export's or checksums' `cursor`, or an event's `cursor`)",
      )
      .optional()
      .openapi({
        description:
          "Read no change past this cursor: `next_cursor` stops there and `has_more` is false once it is reached, so a reconciliation applies exactly the changes up to a checksum's or an export's `cursor` (or a webhook delivery's). A read with `after` equal to `until` answers at once, without waiting.",
      }),
    limit: integerParam('limit', 1, FEED_LIMITS.maxLimit)
      .optional()
      .openapi({
        description: `Changes per read, at most ${FEED_LIMITS.maxLimit}.`,
        default: FEED_LIMITS.defaultLimit,
      }),
    wait: z
      .string()
      .regex(/^[0-9]{1,3}s?$/, 'wait must be a number of seconds, e.g. 30s')
      .transform((raw) => Number(raw.replace(/s$/, '')))
      .refine((seconds) => seconds <= FEED_LIMITS.maxWaitSeconds, {
        message: `wait must be at most ${FEED_LIMITS.maxWaitSeconds}s`,
      })
      .optional()
      .openapi({
        description: `When there is no change after the cursor, hold the request open up to this long (\`30s\`, at most ${FEED_LIMITS.maxWaitSeconds}s) and answer as soon as one commits. Default \`0s\`: answer at once.`,
        example: '30s',
      }),
    type: (
      filterParam('type', CHANGE_TYPES) as unknown as z.ZodType<
        ChangeType[],
        z.ZodTypeDef,
        FilterInput<typeof CHANGE_TYPES>
      >
    )
      .optional()
      .openapi({
        description:
          'Only these event types (comma-separate several); the cursor still moves past the others. A type the token may not read is a 403 naming the scope it needs.',
      }),
  })
  .strict();

export type ChangesQuery = z.infer<typeof ChangesQuerySchema>;

export const ChangePageSchema = z
  .object({
    data: z.array(EventSchema).describe('The changes after the cursor, oldest first.'),
    next_cursor: z
      .string()
      .describe(
        'Where the next read starts: pass it as `after`. It moves past every change read, including those of types this token may not read, and equals `after` when nothing was new.',
      ),
    has_more: z
      .boolean()
      .describe('More changes are already committed after `next_cursor`: read again at once.'),
  })
  .openapi({ title: 'ChangePage' });

export type ChangePage = z.infer<typeof ChangePageSchema>;

export const eventsContract = c.router(
  {
    list: eventRoutes.list('List events', EventListQuerySchema, {
      description: `Every change of the last ${EVENT_RETENTION_DAYS} days, newest first, so you can reconcile what a webhook endpoint missed. Filter by \`type\` (comma-separate several) and \`created_at\` range; \`updated_since\` works as on every collection (events never change after they are written). Only the types the token may read are listed (each type needs its resource's read scope, as on the change feed); the others are left out, and \`meta.total\` counts only those listed.`,
    }),
    retrieve: eventRoutes.retrieve({
      summary: 'Retrieve an event',
      description:
        "An event of a type the token may not read (each type needs its resource's read scope) is a 404, as if it did not exist.",
    }),
    changes: {
      method: 'GET',
      path: '/v1/changes',
      summary: 'Read the change feed',
      description: `Every committed change of the organization, oldest first, after a cursor: one order (\`position\`) for all writers, never skipping a change that commits later, with deletions as \`*.deleted\` events carrying the id and the time. Only the types the token may read are returned (each type needs its resource's read scope). Start from an export's \`cursor\` (\`POST /v1/exports\`) and keep passing \`next_cursor\`; with \`wait\` an empty read waits for the next change. Changes are kept ${EVENT_RETENTION_DAYS} days: a cursor older than that is a 410 \`cursor_expired\`, and the copy must start again from an export.`,
      query: ChangesQuerySchema,
      responses: {
        200: ChangePageSchema,
        ...commonErrorResponses,
        410: problemResponse(
          `The cursor is older than the ${EVENT_RETENTION_DAYS} days of changes kept (\`cursor_expired\`): start again from an export (\`POST /v1/exports\`) and follow the feed from its cursor.`,
        ),
      },
      metadata: operation({ scope: 'events:read', feed: true, sdkName: 'changes.list' }),
    },
  },
  ROUTER_OPTIONS,
);
