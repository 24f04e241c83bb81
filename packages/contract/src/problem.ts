import { z } from './zod-openapi';

/** Stable machine-readable error codes, each with the one HTTP status it is sent with. */
export const ERROR_CODES = {
  validation_error: 400,
  unauthorized: 401,
  forbidden: 403,
  insufficient_scope: 403,
  not_found: 404,
  method_not_allowed: 405,
  not_acceptable: 406,
  conflict: 409,
  invalid_state_transition: 409,
  cursor_expired: 410,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  internal_error: 500,
  service_unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

export const ERROR_TITLES: Record<ErrorCode, string> = {
  validation_error: 'Invalid request',
  unauthorized: 'Authentication required',
  forbidden: 'Forbidden',
  insufficient_scope: 'Insufficient scope',
  not_found: 'Not found',
  method_not_allowed: 'Method not allowed',
  not_acceptable: 'Not acceptable',
  conflict: 'Conflict',
  invalid_state_transition: 'Invalid state transition',
  cursor_expired: 'Cursor expired',
  payload_too_large: 'Payload too large',
  unsupported_media_type: 'Unsupported media type',
  rate_limited: 'Too many requests',
  internal_error: 'Internal server error',
  service_unavailable: 'Service unavailable',
};

/** The page every server serves listing each error code: status, title and what to do. */
export const PROBLEM_TYPE_PATH = '/docs/errors';

/**
 * A problem's `type`: the code's entry on the errors page of the server at `origin` (its
 * PUBLIC_URL, else the origin the request was made to), so the URI opens documentation.
 */
export function problemType(code: ErrorCode, origin: string): string {
  return `${origin.replace(/\/$/, '')}${PROBLEM_TYPE_PATH}#${code}`;
}

export const ProblemFieldErrorSchema = z
  .object({
    path: z.string().describe('Where the problem is, e.g. `query.per_page` or `body.email`.'),
    message: z.string(),
    code: z.string(),
  })
  .openapi({ title: 'ProblemFieldError' });

/** RFC 9457 problem details, sent as `application/problem+json` with every 4xx and 5xx. */
export const ProblemSchema = z
  .object({
    type: z
      .string()
      .url()
      .describe(
        "The error code's entry on this server's errors page, `<origin>/docs/errors#<code>`: its status, its title and what to do.",
      ),
    title: z.string(),
    status: z.number().int(),
    detail: z.string(),
    instance: z.string(),
    code: z.enum(Object.keys(ERROR_CODES) as [ErrorCode, ...ErrorCode[]]),
    request_id: z.string(),
    errors: z.array(ProblemFieldErrorSchema).optional(),
  })
  .openapi({ title: 'Problem' });

export type Problem = z.infer<typeof ProblemSchema>;

/**
 * The problem document as one operation's error response, described for that status. A copy, so
 * the shared schema keeps its own description, marked so the OpenAPI document still names it.
 */
export function problemResponse(description: string) {
  // Not `title`: ts-rest refuses two schemas of one title that differ (here, in description).
  return ProblemSchema.describe(description).openapi({ 'x-component': 'Problem' });
}
export type ProblemFieldError = z.infer<typeof ProblemFieldErrorSchema>;

/** The error responses every authenticated operation can answer with. */
export const commonErrorResponses = {
  400: problemResponse('The request is invalid; `errors` names each offending parameter.'),
  401: problemResponse('Missing, malformed, unknown, expired or revoked token.'),
  403: problemResponse('The token lacks the scope this operation requires.'),
  406: problemResponse('The `Accept` header does not admit `application/json`.'),
  429: problemResponse('The organization exceeded its rate limit; see `Retry-After`.'),
  500: problemResponse('Something went wrong on our side; quote `request_id` to support.'),
} as const;

/** What a list with `q` can answer besides the common errors: its search ran out of time. */
export const searchErrorResponses = {
  ...commonErrorResponses,
  503: problemResponse(
    'The `q` search did not finish within the time budget (`service_unavailable`, with `Retry-After`); use a longer or more specific `q`, or add filters.',
  ),
} as const;
