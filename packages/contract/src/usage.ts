/**
 * Usage: the organization's API requests per hour by status class (from the request log) and its
 * webhook deliveries per hour by outcome (from the delivery attempts), over the last 7 days.
 */
import { initContract } from '@ts-rest/core';
import { operation, ROUTER_OPTIONS } from './operation';
import { commonErrorResponses } from './problem';
import { REQUEST_SOURCES } from './request-logs';
import { timestampSchema } from './resource';
import { z } from './zod-openapi';

const c = initContract();

/** Hours covered by `GET /v1/usage`: the last 7 days, this hour included. */
export const USAGE_HOURS = 7 * 24;

const count = z.number().int().min(0);

export const UsageSchema = z
  .object({
    object: z.literal('usage'),
    from: timestampSchema.describe('The start of the first hour (UTC).'),
    to: timestampSchema.describe('The end of the last hour (UTC), the current hour included.'),
    requests: z
      .array(
        z
          .object({
            hour: timestampSchema.describe('The start of the hour (UTC).'),
            success: count.describe('2xx (and 1xx, 3xx) responses.'),
            client_error: count.describe('4xx responses other than 429.'),
            rate_limited: count.describe('429 responses.'),
            server_error: count.describe('5xx responses.'),
          })
          .openapi({ title: 'UsageRequestHour' }),
      )
      .describe(`API requests per hour, oldest first, ${USAGE_HOURS} hours (zeros included).`),
    webhook_deliveries: z
      .array(
        z
          .object({
            hour: timestampSchema.describe('The start of the hour (UTC).'),
            succeeded: count.describe('Delivery attempts answered with a 2xx.'),
            failed: count.describe('Delivery attempts that failed (another status, or no answer).'),
          })
          .openapi({ title: 'UsageDeliveryHour' }),
      )
      .describe(`Webhook delivery attempts per hour, oldest first, ${USAGE_HOURS} hours.`),
  })
  .openapi({ title: 'Usage' });

export type UsageResource = z.infer<typeof UsageSchema>;

export const usageContract = c.router(
  {
    retrieve: {
      method: 'GET',
      path: '/v1/usage',
      summary: 'Retrieve usage',
      description:
        'Requests per hour by status class (success, client error, 429 rate limited, server error) from the request log, and webhook delivery attempts per hour (succeeded, failed), for the last 7 days in UTC hours, oldest first. Needs `request_logs:read`; requests appear about a second after their response.',
      query: z
        .object({
          source: z.enum(REQUEST_SOURCES).optional().openapi({
            description:
              "Whose requests to count: `api` (the default: your integrations' tokens) or `portal` (the portal's own calls).",
          }),
        })
        .strict(),
      responses: { 200: UsageSchema, ...commonErrorResponses },
      metadata: operation({ scope: 'request_logs:read' }),
    },
  },
  ROUTER_OPTIONS,
);
