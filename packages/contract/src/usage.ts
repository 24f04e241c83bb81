/**
 * Usage: the organization's API requests per bin by status class (from the request log), its
 * webhook deliveries per bin by outcome (from the delivery attempts), and its requests broken down
 * by credential, route and status, over a range that ends now (`hour`, `day`, `week`, `30d`).
 */
import { initContract } from '@ts-rest/core';
import { operation, ROUTER_OPTIONS } from './operation';
import { commonErrorResponses } from './problem';
import { REQUEST_LOG_CREDENTIAL_TYPES, REQUEST_LOG_METHODS, REQUEST_SOURCES } from './request-logs';
import { timestampSchema } from './resource';
import { z } from './zod-openapi';

const c = initContract();

/** The ranges of `GET /v1/usage`, each ending with the bin that holds now (UTC). */
export const USAGE_RANGES = ['hour', 'day', 'week', '30d'] as const;
export type UsageRange = (typeof USAGE_RANGES)[number];
export const DEFAULT_USAGE_RANGE: UsageRange = 'week';

/** Bins of each range: how many, and how long each is. */
export const USAGE_BINS: Record<UsageRange, { count: number; seconds: number }> = {
  hour: { count: 60, seconds: 60 },
  day: { count: 24, seconds: 3600 },
  week: { count: 7 * 24, seconds: 3600 },
  '30d': { count: 30, seconds: 86_400 },
};

/** Hours covered by `GET /v1/usage` without `range` (`week`): the last 7 days, this hour included. */
export const USAGE_HOURS = USAGE_BINS.week.count;

/** Rows per breakdown: the rest is summed in its `other`. */
export const USAGE_BREAKDOWN_TOP = 10;

const count = z.number().int().min(0);
const binStart = timestampSchema.describe('The start of the bin (UTC).');
const hourCompat = timestampSchema.describe(
  'The start of the bin (UTC), the same as `start`: kept under this name for compatibility (bins were hours before `range`).',
);
const errorCount = count.describe('Of those, responses with a status of 400 or more.');
const requestCount = count.describe('Requests.');

const breakdownOther = z
  .object({ requests: requestCount, errors: errorCount })
  .describe(
    'The requests not in `data`: `data` plus `other` add up to the requests (and errors) of the range, read in one statement; the bins are read in another, so a request logged between the two reads (about a second after its response) may be in one and not yet in the other.',
  )
  .openapi({ title: 'UsageBreakdownOther' });

const breakdown = <T extends z.ZodRawShape>(title: string, key: T, what: string) =>
  z
    .object({
      data: z
        .array(
          z
            .object({ ...key, requests: requestCount, errors: errorCount })
            .openapi({ title: `Usage${title}` }),
        )
        .describe(
          `The top ${USAGE_BREAKDOWN_TOP} ${what} by requests over the range, most first (ties by key).`,
        ),
      other: breakdownOther,
    })
    .openapi({ title: `Usage${title}Breakdown` });

export const UsageSchema = z
  .object({
    object: z.literal('usage'),
    range: z.enum(USAGE_RANGES).describe('The range asked for (`week` by default).'),
    bin_seconds: z
      .number()
      .int()
      .describe(
        'The length of each bin in seconds: 60 (`hour`), 3600 (`day`, `week`), 86400 (`30d`).',
      ),
    from: timestampSchema.describe('The start of the first bin (UTC).'),
    to: timestampSchema.describe('The end of the last bin (UTC), the current one included.'),
    requests: z
      .array(
        z
          .object({
            hour: hourCompat,
            start: binStart,
            success: count.describe('2xx (and 1xx, 3xx) responses.'),
            client_error: count.describe('4xx responses other than 429.'),
            rate_limited: count.describe('429 responses.'),
            server_error: count.describe('5xx responses.'),
          })
          .openapi({ title: 'UsageRequestHour' }),
      )
      .describe(
        'API requests per bin, oldest first, every bin of the range (zeros included): 60 minutes (`hour`), 24 hours (`day`), 168 hours (`week`), 30 days (`30d`).',
      ),
    webhook_deliveries: z
      .array(
        z
          .object({
            hour: hourCompat,
            start: binStart,
            succeeded: count.describe('Delivery attempts answered with a 2xx.'),
            failed: count.describe('Delivery attempts that failed (another status, or no answer).'),
          })
          .openapi({ title: 'UsageDeliveryHour' }),
      )
      .describe('Webhook delivery attempts per bin, oldest first, the same bins as `requests`.'),
    breakdown: z
      .object({
        credentials: breakdown(
          'Credential',
          {
            type: z.enum(REQUEST_LOG_CREDENTIAL_TYPES),
            id: z
              .string()
              .describe('The personal access token (`tok_…`) or OAuth client (`oac_…`).'),
            name: z
              .string()
              .nullable()
              .describe("The token's or OAuth client's name; null once it is deleted."),
          },
          'credentials',
        ),
        routes: breakdown(
          'Route',
          {
            method: z.enum(REQUEST_LOG_METHODS),
            route: z.string().describe('The route template (`/v1/students/:id`).'),
          },
          'routes',
        ),
        statuses: breakdown(
          'Status',
          { status: z.number().int().describe('The HTTP status of the responses.') },
          'statuses',
        ),
      })
      .describe("The range's requests by credential, by route (method and template) and by status.")
      .openapi({ title: 'UsageBreakdown' }),
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
        'Requests per bin by status class (success, client error, 429 rate limited, server error) from the request log, webhook delivery attempts per bin (succeeded, failed), and the requests broken down by credential, route and status (the top 10 of each, with the rest in `other`), over a range ending now, in UTC bins, oldest first: `range=hour` (60 one-minute bins), `day` (24 one-hour bins), `week` (the default: 168 one-hour bins), `30d` (30 one-day bins; the request log keeps 14 days by default). Needs `request_logs:read`; requests appear about a second after their response.',
      query: z
        .object({
          source: z.enum(REQUEST_SOURCES).optional().openapi({
            description:
              "Whose requests to count: `api` (the default: your integrations' tokens) or `portal` (the portal's own calls).",
          }),
          range: z.enum(USAGE_RANGES).optional().openapi({
            description:
              'The period counted, ending now: `hour` (60 one-minute bins), `day` (24 one-hour bins), `week` (the default: 168 one-hour bins), `30d` (30 one-day bins).',
          }),
        })
        .strict(),
      responses: { 200: UsageSchema, ...commonErrorResponses },
      metadata: operation({ scope: 'request_logs:read' }),
    },
  },
  ROUTER_OPTIONS,
);
