/**
 * The request log: one entry per API request an organization's credentials made (method, route
 * template, path without the query, status, latency, credential, request id, error code). Never a body, query value,
 * header or secret. Written by the server in batches after each response; read-only over the API.
 */
import { initContract } from '@ts-rest/core';
import { idSchema } from './ids';
import { filter, listQuery } from './list';
import { ROUTER_OPTIONS } from './operation';
import { timestampSchema } from './resource';
import { readRoutes } from './routes';
import { z } from './zod-openapi';

const c = initContract();

/** How long entries are kept by default (`REQUEST_LOG_RETENTION_DAYS`). */
export const REQUEST_LOG_DEFAULT_RETENTION_DAYS = 14;

export const REQUEST_LOG_METHODS = [
  'GET',
  'POST',
  'PATCH',
  'PUT',
  'DELETE',
  'HEAD',
  'OPTIONS',
] as const;
export const STATUS_CLASSES = ['1xx', '2xx', '3xx', '4xx', '5xx'] as const;
export type StatusClass = (typeof STATUS_CLASSES)[number];
export const REQUEST_LOG_CREDENTIAL_TYPES = [
  'personal_access_token',
  'oauth_access_token',
] as const;

export const RequestLogSchema = z
  .object({
    id: idSchema('request_log'),
    object: z.literal('request_log'),
    method: z.enum(REQUEST_LOG_METHODS),
    route: z.string().describe('The route template (`/v1/students/:id`).'),
    path: z
      .string()
      .nullable()
      .describe(
        'The path requested, with its ids (`/v1/students/stu_…`) but never the query string: nothing after `?` is kept. Null for entries recorded before paths were.',
      ),
    status: z.number().int().describe('The HTTP status of the response.'),
    status_class: z.enum(STATUS_CLASSES),
    latency_ms: z
      .number()
      .describe('Time from the request reaching the server to the response finishing, in ms.'),
    credential: z
      .object({
        type: z.enum(REQUEST_LOG_CREDENTIAL_TYPES),
        id: z
          .string()
          .describe(
            'The personal access token (`tok_…`) or OAuth client (`oac_…`) that called; never a secret.',
          ),
      })
      .openapi({ title: 'RequestLogCredential' }),
    request_id: z.string().describe('The `X-Request-Id` of the request.'),
    error_code: z
      .string()
      .nullable()
      .describe('The problem `code` of an error response; null on success.'),
    created_at: timestampSchema,
  })
  .openapi({ title: 'RequestLog' });

export type RequestLogResource = z.infer<typeof RequestLogSchema>;

/** Who made a request: an integration's credential (`api`), or the portal's own calls. */
export const REQUEST_SOURCES = ['api', 'portal'] as const;
export type RequestSource = (typeof REQUEST_SOURCES)[number];

export const RequestLogListQuerySchema = listQuery({
  filters: {
    source: filter.oneOf(
      REQUEST_SOURCES,
      "`api` (the default: your integrations' tokens) or `portal` (the portal's own calls); `api,portal` for both.",
    ),
    status: filter.integer(100, 599),
    status_class: filter.oneOf(STATUS_CLASSES),
    method: filter.oneOf(REQUEST_LOG_METHODS),
    route: filter.string(200),
    credential_id: filter.string(64),
    request_id: filter.string(128),
  },
});

const requestLogRoutes = readRoutes('/v1/request_logs', 'request_logs', RequestLogSchema);

export const requestLogsContract = c.router(
  {
    list: requestLogRoutes.list('List request logs', RequestLogListQuerySchema, {
      description: `The organization's API requests: method, route template, path (never the query string), status, latency, credential, request id and error code (never bodies, query values, headers or secrets). Newest first; kept ${REQUEST_LOG_DEFAULT_RETENTION_DAYS} days by default. Entries appear within about a second of the response. Only the requests of your integrations by default; the portal's own calls with \`source=portal\` (or \`source=api,portal\` for both). Filter by \`status\`, \`status_class\`, \`method\`, \`route\`, \`credential_id\`, \`request_id\` (comma-separate several) and \`created_at\` range (\`created_at[gte]\` for since, \`created_at[lt]\` for until).`,
    }),
    retrieve: requestLogRoutes.retrieve({ summary: 'Retrieve a request log entry' }),
  },
  ROUTER_OPTIONS,
);
