/**
 * Webhook endpoints and their deliveries (Standard Webhooks). An endpoint subscribes to event
 * types; each event it subscribes to becomes one delivery (a `msg_` message, whose id is the
 * `webhook-id` header on every attempt), retried on a schedule until it succeeds or fails.
 */
import { initContract } from '@ts-rest/core';
import { dateTimeInput } from './date-time';
import { EVENT_TYPES, type EventType } from './events';
import { idSchema } from './ids';
import { filter, listQuery, listResponse } from './list';
import { ROUTER_OPTIONS } from './operation';
import { searchErrorResponses } from './problem';
import {
  deletedSchema,
  MEMBER_ID_DESCRIPTION,
  TransferSchema,
  IdPathParams,
  readErrorResponses,
  text,
  timestampSchema,
} from './resource';
import { z } from './zod-openapi';
import { listRoute, resourceRoutes } from './routes';

const c = initContract();

/** Event types an endpoint can subscribe to: every catalogued type but `ping`, which `test` sends. */
export const SUBSCRIBABLE_EVENT_TYPES = EVENT_TYPES.filter(
  (type): type is Exclude<EventType, 'ping'> => type !== 'ping',
) as [Exclude<EventType, 'ping'>, ...Exclude<EventType, 'ping'>[]];

/** How many endpoints one organization may register. */
export const MAX_WEBHOOK_ENDPOINTS = 16;

/** How long a rotated-out secret keeps signing beside the new one. */
export const WEBHOOK_SECRET_OVERLAP_HOURS = 24;

/** Days of failed attempts (no success in between) after which an endpoint is disabled as `failing` (the server's default `WEBHOOK_DISABLE_AFTER`). */
export const WEBHOOK_DISABLE_AFTER_DAYS = 5;

/** Bytes of a receiver's response body kept with each attempt. */
export const WEBHOOK_RESPONSE_BODY_LIMIT = 4096;

/**
 * Why an endpoint is disabled: `requested` by you (`enabled: false`), `gone` after it answered
 * 410, `failing` after every attempt failed for 5 days, `credential_revoked` /
 * `credential_expired` when the credential that owns it was revoked (or its OAuth client
 * deleted, or the user's grant revoked) or expired, `member_removed` when the member who made
 * it (or to whom it was transferred) left the organization. Null while enabled.
 */
export const WEBHOOK_DISABLED_REASONS = [
  'requested',
  'gone',
  'failing',
  'credential_revoked',
  'credential_expired',
  'member_removed',
] as const;
export type WebhookDisabledReason = (typeof WEBHOOK_DISABLED_REASONS)[number];

/** The kinds of credential that can own a webhook endpoint. */
export const WEBHOOK_OWNER_TYPES = ['personal_access_token', 'oauth_client'] as const;
export type WebhookOwnerType = (typeof WEBHOOK_OWNER_TYPES)[number];

export const WebhookEndpointOwnerSchema = z
  .object({
    type: z.enum(WEBHOOK_OWNER_TYPES),
    id: z
      .string()
      .describe(
        'The personal access token (`tok_…`) or the OAuth client (`oac_…`, its `client_id`).',
      ),
    user_id: idSchema('user')
      .nullable()
      .describe(
        "For an OAuth client acting for a user: that user (the endpoint lives as long as the user's grant). Null otherwise.",
      ),
  })
  .nullable()
  .describe(
    'The credential the endpoint is bound to: the one that created it. When that credential is revoked or expires, the endpoint is disabled and sends nothing more. Changes (by its member or an admin) keep it; a transfer to another member unbinds it. Null for endpoints made in the portal, by the admin CLI or `pnpm dev`, or transferred.',
  )
  .openapi({ title: 'WebhookEndpointOwner' });

export type WebhookEndpointOwner = z.infer<typeof WebhookEndpointOwnerSchema>;

/** The delegation rule for endpoints, as every operation that makes or changes one states it. */
const READ_RULE =
  "The calling token must hold the read scope of every event type the endpoint will receive (`student.*` needs `students:read`, `*` every resource's; see `EVENT_READ_SCOPES`), else 403 `forbidden`. A new endpoint is bound to the calling token's credential (`owner`), disabled when that is revoked or expires, and belongs to the calling member (`member_id`). Changing one needs being that member or an admin (403 otherwise).";

const eventsField = z
  .array(z.enum(['*', ...SUBSCRIBABLE_EVENT_TYPES]))
  .min(1, 'must name at least one event type, or "*" for all')
  .max(SUBSCRIBABLE_EVENT_TYPES.length)
  .refine((types) => new Set(types).size === types.length, 'must not repeat an event type')
  .refine(
    (types) => !types.includes('*') || types.length === 1,
    '"*" subscribes to every event type and cannot be combined with others',
  )
  .describe('Event types to deliver, or `["*"]` for every type (including types added later).');

const urlField = z
  .string()
  .min(1, 'must not be empty')
  .max(2048, 'must be at most 2048 characters')
  .describe(
    'Where deliveries are POSTed. Must be `https` and resolve to a public address (checked at registration and at every connection).',
  );

export const WebhookEndpointSchema = z
  .object({
    id: idSchema('webhook_endpoint'),
    object: z.literal('webhook_endpoint'),
    url: z.string(),
    description: z.string().nullable(),
    events: z.array(z.enum(['*', ...SUBSCRIBABLE_EVENT_TYPES])),
    enabled: z.boolean(),
    disabled_reason: z
      .enum(WEBHOOK_DISABLED_REASONS)
      .nullable()
      .describe(
        '`requested` (you disabled it), `gone` (it answered 410), `failing` (every attempt failed for 5 days), `credential_revoked` / `credential_expired` (its owner credential ended), `member_removed` (the member it belongs to left; an admin can transfer it and enable it again); null while enabled.',
      ),
    owner: WebhookEndpointOwnerSchema,
    created_at: timestampSchema,
    updated_at: timestampSchema,
    // Last: added later, and the PHP client's model constructors take fields in order.
    member_id: idSchema('user').nullable().describe(MEMBER_ID_DESCRIPTION),
    failing_since: timestampSchema
      .nullable()
      .describe(
        'When the current run of failed attempts began: the first failure since the last success (or since the endpoint was last enabled or disabled). Null while its attempts succeed or it has failed none since.',
      ),
    disables_at: timestampSchema
      .nullable()
      .describe(
        `When the endpoint will be disabled as \`failing\` if no attempt succeeds before then: \`failing_since\` plus ${WEBHOOK_DISABLE_AFTER_DAYS} days (the first failed attempt from then on disables it). Null while it is not failing, and once it is disabled.`,
      ),
  })
  .openapi({ title: 'WebhookEndpoint' });

export type WebhookEndpoint = z.infer<typeof WebhookEndpointSchema>;

const secretSchema = z
  .string()
  .regex(/^whsec_[A-Za-z0-9+/]+={0,2}$/)
  .describe(
    'The signing secret (`whsec_` + base64). Shown only here: store it now to verify deliveries.',
  );

export const WebhookEndpointWithSecretSchema = WebhookEndpointSchema.extend({
  secret: secretSchema,
}).openapi({ title: 'WebhookEndpointWithSecret' });

export const WebhookEndpointCreateSchema = z
  .object({
    url: urlField,
    events: eventsField,
    description: text(500).nullable().optional(),
    enabled: z.boolean().default(true),
  })
  .strict()
  .openapi({ title: 'WebhookEndpointCreate' });

export const WebhookEndpointUpdateSchema = z
  .object({
    url: urlField,
    events: eventsField,
    description: text(500).nullable(),
    enabled: z
      .boolean()
      .describe('`true` re-enables a disabled endpoint; its pending deliveries are sent at once.'),
  })
  .partial()
  .strict()
  .openapi({ title: 'WebhookEndpointUpdate' });

export const WebhookEndpointListQuerySchema = listQuery({
  filters: { enabled: filter.oneOf(['true', 'false']) },
  search: ['url', 'description'],
});

/** `pending` until a 2xx (`succeeded`) or the last scheduled attempt failed (`failed`). */
export const WEBHOOK_DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;
export type WebhookDeliveryStatus = (typeof WEBHOOK_DELIVERY_STATUSES)[number];

export const WebhookAttemptSchema = z
  .object({
    attempted_at: timestampSchema,
    status_code: z
      .number()
      .int()
      .nullable()
      .describe('The HTTP status the endpoint answered; null when no response arrived.'),
    latency_ms: z.number().int().describe('From sending the request to the end of the response.'),
    response_body: z
      .string()
      .nullable()
      .describe(`The first ${WEBHOOK_RESPONSE_BODY_LIMIT} bytes of the response body.`),
    error: z
      .string()
      .nullable()
      .describe('Why the attempt failed without a response (timeout, refused connection, …).'),
    request_headers: z
      .record(z.string(), z.string())
      .nullable()
      .describe(
        'The HTTP headers this attempt sent (lower-case names), with each `webhook-signature` signature withheld: `v1,<withheld>`, one per signing secret. Null when no request was made (an invalid URL) and for attempts made before headers were recorded.',
      ),
  })
  .openapi({ title: 'WebhookAttempt' });

export const WebhookDeliverySchema = z
  .object({
    id: idSchema('webhook_message').describe('The `webhook-id` header of every attempt.'),
    object: z.literal('webhook_delivery'),
    endpoint_id: idSchema('webhook_endpoint'),
    event_id: idSchema('event'),
    event_type: z.enum(EVENT_TYPES),
    status: z.enum(WEBHOOK_DELIVERY_STATUSES),
    attempt_count: z.number().int(),
    next_attempt_at: timestampSchema
      .nullable()
      .describe('When the next attempt is due; null once succeeded or failed.'),
    attempts: z.array(WebhookAttemptSchema).describe('Every attempt, oldest first.'),
    created_at: timestampSchema,
    updated_at: timestampSchema,
  })
  .openapi({ title: 'WebhookDelivery' });

export type WebhookDelivery = z.infer<typeof WebhookDeliverySchema>;

export const WebhookDeliveryListQuerySchema = listQuery({
  filters: {
    status: filter.oneOf(WEBHOOK_DELIVERY_STATUSES),
    event_type: filter.oneOf(EVENT_TYPES),
  },
});

/** How far back a replay of failed deliveries may reach. */
export const WEBHOOK_REPLAY_MAX_DAYS = 30;

export const WebhookReplayFailedSchema = z
  .object({
    since: dateTimeInput('since').describe(
      `Replay the failed deliveries created at or after this instant (at most ${WEBHOOK_REPLAY_MAX_DAYS} days ago).`,
    ),
  })
  .strict()
  .openapi({ title: 'WebhookReplayFailed' });

export const WebhookReplaySchema = z
  .object({
    object: z.literal('webhook_replay'),
    endpoint_id: idSchema('webhook_endpoint'),
    since: timestampSchema,
    queued: z
      .number()
      .int()
      .describe('How many failed deliveries were queued again (each keeps its `webhook-id`).'),
  })
  .openapi({ title: 'WebhookReplay' });

export type WebhookReplay = z.infer<typeof WebhookReplaySchema>;

/** The window an endpoint's health is measured over. */
export const WEBHOOK_STATS_WINDOW_HOURS = 24;

const nullableMs = (what: string) =>
  z.number().int().nullable().describe(`${what}; null without attempts.`);

export const WebhookEndpointStatsSchema = z
  .object({
    object: z.literal('webhook_endpoint_stats'),
    endpoint_id: idSchema('webhook_endpoint'),
    from: timestampSchema.describe('Start of the window (now minus 24 hours).'),
    to: timestampSchema.describe('End of the window (now).'),
    attempts: z.number().int().describe('Delivery attempts made in the window.'),
    succeeded: z.number().int().describe('Attempts the endpoint answered with a 2xx.'),
    failed: z.number().int().describe('Attempts answered otherwise, or not at all.'),
    success_rate: z
      .number()
      .nullable()
      .describe('`succeeded / attempts`, from 0 to 1; null without attempts.'),
    latency_ms: z
      .object({
        p50: nullableMs('Median attempt latency'),
        p95: nullableMs('95th percentile attempt latency'),
        max: nullableMs('Slowest attempt'),
      })
      .openapi({ title: 'WebhookLatency' }),
  })
  .openapi({ title: 'WebhookEndpointStats' });

export type WebhookEndpointStats = z.infer<typeof WebhookEndpointStatsSchema>;

const endpointRoutes = resourceRoutes('/v1/webhook_endpoints', 'webhooks', WebhookEndpointSchema);

export const webhookEndpointsContract = c.router(
  {
    list: endpointRoutes.list('List webhook endpoints', WebhookEndpointListQuerySchema, {
      errors: searchErrorResponses,
    }),
    create: endpointRoutes.create({
      summary: 'Create a webhook endpoint',
      description: `Returns the signing \`secret\`, which is not shown again. At most ${MAX_WEBHOOK_ENDPOINTS} endpoints per organization (409 beyond). ${READ_RULE}`,
      body: WebhookEndpointCreateSchema,
      response: WebhookEndpointWithSecretSchema,
      oneTimeSecret: 'secret',
      delegation: 'webhook_endpoint',
    }),
    retrieve: endpointRoutes.retrieve({ summary: 'Retrieve a webhook endpoint' }),
    update: endpointRoutes.update({
      summary: 'Update a webhook endpoint',
      description: `Only the fields sent change. A new \`events\` list applies to events from now on; \`enabled: true\` sends what is still pending. ${READ_RULE}`,
      body: WebhookEndpointUpdateSchema,

      delegation: 'webhook_endpoint',
    }),
    delete: endpointRoutes.delete({
      summary: 'Delete a webhook endpoint',
      description: 'Its pending deliveries are dropped, and its delivery history with it.',
      response: deletedSchema('webhook_endpoint', 'DeletedWebhookEndpoint'),
    }),
    transfer: endpointRoutes.action('transfer', {
      summary: 'Transfer a webhook endpoint to another member',
      description:
        'Admins only (403 otherwise). The endpoint then belongs to `member_id`: it is no longer bound to the credential that made it, stops when that member is removed, and delivers only what their role may read. The member must be able to read its events (403 otherwise). Recorded in the audit log.',
      body: TransferSchema,
      delegation: 'transfer',
    }),
    rotateSecret: endpointRoutes.action('rotate_secret', {
      summary: 'Rotate the signing secret',
      description: `Returns the new \`secret\`. For ${WEBHOOK_SECRET_OVERLAP_HOURS} hours deliveries carry two signatures, one per secret, so receivers can switch without missing one. Rotating again within that window retires the older previous secret at once. ${READ_RULE}`,
      response: WebhookEndpointWithSecretSchema,
      oneTimeSecret: 'secret',
      delegation: 'webhook_endpoint',
    }),
    test: endpointRoutes.action('test', {
      summary: 'Send a test event',
      description:
        'Queues a `ping` event to this endpoint only and returns its delivery; follow it with the deliveries list. Refused (409) while the endpoint is disabled.',
      response: WebhookDeliverySchema,
      status: 202,
    }),
    stats: endpointRoutes.view('stats', {
      summary: "An endpoint's success rate and latency",
      description: `Its delivery attempts over the last ${WEBHOOK_STATS_WINDOW_HOURS} hours: how many, how many succeeded (2xx), the success rate, and latency percentiles.`,
      response: WebhookEndpointStatsSchema,
    }),
    replayFailed: endpointRoutes.action('replay_failed', {
      summary: 'Replay failed deliveries',
      description: `Queues again, now, every delivery of this endpoint that failed and was created at or after \`since\` (at most ${WEBHOOK_REPLAY_MAX_DAYS} days ago; 400 otherwise), each with its \`webhook-id\`, as a redelivery does: one more attempt each. For the day an endpoint was down. Refused (409) while the endpoint is disabled.`,
      body: WebhookReplayFailedSchema,
      response: WebhookReplaySchema,
      status: 202,
    }),
    deliveries: {
      ...listRoute('/v1/webhook_endpoints/:id/deliveries', {
        summary: "List an endpoint's deliveries",
        description:
          'Each delivery with its state and every attempt. Filters: `status`, `event_type` (comma-separate several).',
        query: WebhookDeliveryListQuerySchema,
        response: listResponse(WebhookDeliverySchema, 'WebhookDeliveryList'),
        errors: readErrorResponses,
        scope: 'webhooks:read',
      }),
      pathParams: IdPathParams,
    },
  },
  ROUTER_OPTIONS,
);

const deliveryRoutes = resourceRoutes('/v1/webhook_deliveries', 'webhooks', WebhookDeliverySchema);

export const webhookDeliveriesContract = c.router(
  {
    retrieve: deliveryRoutes.retrieve({ summary: 'Retrieve a delivery' }),
    retry: deliveryRoutes.action('retry', {
      summary: 'Redeliver',
      description:
        'Attempts the delivery again now, whatever its status, with the same `webhook-id`. A pending delivery keeps its retry schedule; a succeeded or failed one gets this one attempt. Refused (409) while the endpoint is disabled.',

      status: 202,
    }),
  },
  ROUTER_OPTIONS,
);
