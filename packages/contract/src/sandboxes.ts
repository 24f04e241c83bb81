/**
 * Sandbox organizations: copies of an organization's shape, seeded with a generated school, where
 * an integration is built and tried without touching real student data. A sandbox is an
 * organization of its own (its own data, tokens, webhooks and rate limit) linked to its parent;
 * its tokens start `pat_test_`. `POST /v1/sandbox/trigger` makes a realistic change there that
 * sends the event asked for. See docs/sandboxes.md.
 */
import { initContract } from '@ts-rest/core';
import { EVENT_TYPES, type EventType } from './events';
import { idSchema } from './ids';
import { listQuery, listResponse } from './list';
import { operation, ROUTER_OPTIONS } from './operation';
import { commonErrorResponses, problemResponse } from './problem';
import { deletedSchema, IdPathParams, readErrorResponses, text, timestampSchema } from './resource';
import { listRoute } from './routes';
import { PersonalAccessTokenCreateSchema, PersonalAccessTokenWithSecretSchema } from './tokens';
import { z } from './zod-openapi';

const c = initContract();

/** The most sandboxes one organization may have at once. */
export const SANDBOX_LIMIT = 5;
/** The largest generated school a sandbox is seeded with, and the default. */
export const SANDBOX_MAX_STUDENTS = 50_000;
export const SANDBOX_DEFAULT_STUDENTS = 200;
/** The prefix of a sandbox's personal access tokens (a live one's is `pat_`). */
export const SANDBOX_TOKEN_PREFIX = 'pat_test_';

export const SandboxSchema = z
  .object({
    id: idSchema('organization').describe("The sandbox's organization id."),
    object: z.literal('sandbox'),
    name: z.string(),
    parent_id: idSchema('organization').describe('The organization it is a sandbox of.'),
    students: z.number().int().describe('How many students its generated school has.'),
    seed: z
      .number()
      .int()
      .describe('The generator seed: the same seed and size give the same school.'),
    created_at: timestampSchema,
    reset_at: timestampSchema.nullable().describe('When it was last reset to its seed.'),
  })
  .openapi({ title: 'Sandbox' });
export type Sandbox = z.infer<typeof SandboxSchema>;

export const SandboxCreateSchema = z
  .object({
    name: text(200),
    students: z
      .number()
      .int()
      .min(0)
      .max(SANDBOX_MAX_STUDENTS)
      .default(SANDBOX_DEFAULT_STUDENTS)
      .describe(
        `Students in its generated school (with its courses, enrollments, payments, exams and results); default ${SANDBOX_DEFAULT_STUDENTS}, at most ${SANDBOX_MAX_STUDENTS.toLocaleString('en')}.`,
      ),
    seed: z
      .number()
      .int()
      .min(0)
      .max(2 ** 31 - 1)
      .default(1)
      .describe('The generator seed; default 1.'),
  })
  .strict()
  .openapi({ title: 'SandboxCreate' });

export const SandboxListQuerySchema = listQuery({ filters: {} });
export const SandboxListSchema = listResponse(SandboxSchema, 'SandboxList');

/** The event types a trigger can make: every resource event (a `ping` is a webhook test). */
export const TRIGGER_EVENT_TYPES = EVENT_TYPES.filter(
  (type): type is Exclude<EventType, 'ping'> => type !== 'ping',
) as [Exclude<EventType, 'ping'>, ...Exclude<EventType, 'ping'>[]];

export const SandboxTriggerSchema = z
  .object({
    event: z.enum(TRIGGER_EVENT_TYPES).describe('The event type to make happen.'),
    overrides: z
      .record(z.unknown())
      .optional()
      .describe(
        'Fields of the change: for a `*.created` event, of the created record (as its create body takes them); for a `*.updated` event, the update itself. Other events take none.',
      ),
  })
  .strict()
  .openapi({ title: 'SandboxTrigger' });

export const SandboxTriggerResultSchema = z
  .object({
    object: z.literal('sandbox_trigger'),
    event: z.object({ id: idSchema('event'), type: z.enum(TRIGGER_EVENT_TYPES) }),
    record: z
      .object({ object: z.string(), id: z.string() })
      .describe('The record the change was made to.'),
  })
  .openapi({ title: 'SandboxTriggerResult' });

const ADMIN_NOTE = 'Needs `organization:write` (admins), from a token of the parent organization.';

export const sandboxesContract = c.router(
  {
    create: {
      method: 'POST',
      path: '/v1/sandboxes',
      summary: 'Create a sandbox',
      description: `A new organization linked to this one, seeded with a generated school of \`students\` students (deterministic by \`seed\`), with its own tokens, webhooks and rate limit. At most ${SANDBOX_LIMIT} per organization (409 beyond); a sandbox has no sandboxes. ${ADMIN_NOTE}`,
      body: SandboxCreateSchema,
      responses: {
        201: SandboxSchema,
        ...commonErrorResponses,
        409: problemResponse(`The organization has ${SANDBOX_LIMIT} sandboxes, or is a sandbox.`),
      },
      metadata: operation({ scope: 'organization:write', cost: 20 }),
    },
    list: listRoute('/v1/sandboxes', {
      summary: 'List sandboxes',
      description: "The organization's sandboxes, newest first.",
      query: SandboxListQuerySchema,
      response: SandboxListSchema,
      scope: 'organization:read',
    }),
    retrieve: {
      method: 'GET',
      path: '/v1/sandboxes/:id',
      pathParams: IdPathParams,
      summary: 'Retrieve a sandbox',
      responses: { 200: SandboxSchema, ...readErrorResponses },
      metadata: operation({ scope: 'organization:read' }),
    },
    reset: {
      method: 'POST',
      path: '/v1/sandboxes/:id/reset',
      pathParams: IdPathParams,
      body: c.noBody(),
      summary: 'Reset a sandbox to its seed',
      description: `Deletes its records (students, courses, enrollments, payments, exams, results, imports and exports) and generates its school again from its seed, sending no events; its tokens, webhooks and change feed history stay. ${ADMIN_NOTE}`,
      responses: { 200: SandboxSchema, ...readErrorResponses },
      metadata: operation({ scope: 'organization:write', cost: 20 }),
    },
    delete: {
      method: 'DELETE',
      path: '/v1/sandboxes/:id',
      pathParams: IdPathParams,
      summary: 'Delete a sandbox',
      description: `Deletes the sandbox and everything in it, its tokens included. ${ADMIN_NOTE}`,
      body: c.noBody(),
      responses: { 200: deletedSchema('sandbox', 'DeletedSandbox'), ...readErrorResponses },
      metadata: operation({ scope: 'organization:write' }),
    },
    createToken: {
      method: 'POST',
      path: '/v1/sandboxes/:id/tokens',
      pathParams: IdPathParams,
      summary: 'Create a token for a sandbox',
      description:
        "A personal access token of the sandbox (`pat_test_…`): how a member reaches it. Made by a member's token, it acts for that member, with their role in this organization as it changes (a viewer's reads only), and dies when they leave it. Its scopes must be among the calling token's, and it expires no later. A member's token needs only `organization:read`, as reading the sandbox does, so every member can reach it; a token that acts for no member (its token would act for the sandbox itself) also needs `tokens:write`. Returns the `token`, which is not shown again.",
      body: PersonalAccessTokenCreateSchema,
      responses: { 201: PersonalAccessTokenWithSecretSchema, ...readErrorResponses },
      metadata: operation({ scope: 'organization:read', delegation: 'credential' }),
    },
  },
  ROUTER_OPTIONS,
);

export const sandboxTriggerContract = c.router(
  {
    trigger: {
      method: 'POST',
      path: '/v1/sandbox/trigger',
      summary: 'Trigger an event in a sandbox',
      description:
        "With a sandbox's token only (403 with a live one): makes a realistic change through the same rules as a real one, so that the event asked for is sent, and only it: `student.created` creates a student, `enrollment.completed` completes an active enrollment, `payment.failed` fails a pending payment, `exam_result.published` publishes a draft result. Needs the write scope of the event's resource. 409 when the sandbox has no record in the state the change needs (reset it).",
      body: SandboxTriggerSchema,
      responses: {
        201: SandboxTriggerResultSchema,
        ...commonErrorResponses,
        409: problemResponse('The sandbox has no record in the state the change needs.'),
      },
      metadata: operation({ scope: null, sandbox: true }),
    },
  },
  ROUTER_OPTIONS,
);
