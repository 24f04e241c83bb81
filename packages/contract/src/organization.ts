/**
 * The calling token's organization: its name, plan and rate limit with how much of the current
 * window is used. The name can be changed over the API; the plan and the limit only by an
 * operator (`pnpm platform orgs:update`), since they are what the customer pays for.
 */
import { initContract } from '@ts-rest/core';
import { idSchema } from './ids';
import { operation, ROUTER_OPTIONS } from './operation';
import { commonErrorResponses } from './problem';
import { text, timestampSchema, writeErrorResponses } from './resource';
import { z } from './zod-openapi';

const c = initContract();

export const ORGANIZATION_PLANS = ['standard', 'enterprise'] as const;
export type OrganizationPlan = (typeof ORGANIZATION_PLANS)[number];

export const OrganizationSchema = z
  .object({
    id: idSchema('organization'),
    object: z.literal('organization'),
    name: z.string(),
    plan: z.enum(ORGANIZATION_PLANS),
    rate_limit: z
      .object({
        limit_per_minute: z
          .number()
          .int()
          .describe('Requests per rolling 60 s, across all of the organization’s tokens.'),
        used: z.number().int().describe('Requests accepted in the last 60 s, this one included.'),
        remaining: z.number().int(),
        resets_at: timestampSchema.describe('When the oldest request counted leaves the window.'),
      })
      .openapi({ title: 'OrganizationRateLimit' }),
    created_at: timestampSchema,
    updated_at: timestampSchema,
  })
  .openapi({ title: 'Organization' });

export type OrganizationResource = z.infer<typeof OrganizationSchema>;

/** Fields a customer may read but only an operator may change (`pnpm platform orgs:update`). */
export const OPERATOR_ONLY_ORGANIZATION_FIELDS = ['plan', 'rate_limit'] as const;

/**
 * Only `name`. `plan` and `rate_limit` are refused with a message that says who changes them,
 * rather than as merely unknown fields (they are in the response, so callers will try).
 */
const OrganizationUpdateFields = z
  .object({ name: text(200).optional() })
  .strict()
  .openapi({ title: 'OrganizationUpdate' });

export const OrganizationUpdateSchema = z.preprocess((value, ctx) => {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  const rest: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  for (const field of OPERATOR_ONLY_ORGANIZATION_FIELDS) {
    if (!(field in rest)) continue;
    delete rest[field];
    ctx.addIssue({
      code: z.ZodIssueCode.custom,
      path: [field],
      message: `${field} cannot be changed over the API: it is changed by an operator (pnpm platform orgs:update); only name can be changed here`,
    });
  }
  return rest;
}, OrganizationUpdateFields) as unknown as typeof OrganizationUpdateFields;
// The cast keeps the body's input type (`{ name?: string }`) for clients; preprocess widens it to unknown.

export const organizationContract = c.router(
  {
    retrieve: {
      method: 'GET',
      path: '/v1/organization',
      summary: 'Retrieve your organization',
      description:
        'The organization the calling token belongs to, with its plan and rate limit, and how much of the current 60-second window is used.',
      query: z.object({}).strict(),
      responses: { 200: OrganizationSchema, ...commonErrorResponses },
      metadata: operation({ scope: 'organization:read' }),
    },
    update: {
      method: 'PATCH',
      path: '/v1/organization',
      summary: 'Rename your organization',
      description:
        'Only `name` can be changed here. `plan` and the rate limit are changed by an operator (400 if sent). Recorded in the audit log.',
      body: OrganizationUpdateSchema,
      responses: { 200: OrganizationSchema, ...writeErrorResponses },
      metadata: operation({ scope: 'organization:write' }),
    },
  },
  ROUTER_OPTIONS,
);
