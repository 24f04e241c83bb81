/**
 * The arguments of an SDK call, checked before anything is sent: plain JavaScript has no type
 * checker, so a misplaced option is refused with a message rather than sent or dropped.
 */
import type { RequestOptions, RouteSpec } from './route-types';

/** The per-call options, a call's second argument. */
const REQUEST_OPTION_KEYS = new Set(['maxRetries', 'timeoutMs', 'idempotencyKey']);

/** The keys of a request-args object; a bare query (collections only) has none of them. */
const REQUEST_ARG_KEYS = new Set(['query', 'params', 'body', 'extraHeaders', 'fetchOptions']);

/** The args of the list call for the next page: the same, with its cursor (or number) as the page. */
export function nextPageArgs(
  args: unknown,
  queryOnly: boolean,
  next: { cursor: string } | { page: number },
): unknown {
  const record = (args ?? {}) as Record<string, unknown>;
  const isArgs = !queryOnly || Object.keys(record).some((key) => REQUEST_ARG_KEYS.has(key));
  // The caller's query, with the next page's cursor (or number) in place of theirs.
  const paged = (query: Record<string, unknown> | undefined) => {
    const { page: _page, cursor: _cursor, ...rest } = query ?? {};
    return { ...rest, ...next };
  };
  if (!isArgs) return paged(record);
  return { ...record, query: paged(record.query as Record<string, unknown> | undefined) };
}

/** What a call sends besides its route: path parameters, query, body, headers, fetch options. */
export interface RequestArgs {
  params?: Record<string, unknown>;
  query?: Record<string, unknown>;
  body?: unknown;
  extraHeaders?: Record<string, string>;
  fetchOptions?: RequestInit;
}

/** A route with a query and neither path parameters nor a body: it also takes the bare query. */
export function isQueryOnly(route: RouteSpec): boolean {
  return !route.body && !/\{\w+\}|:\w/.test(route.path) && route.query !== undefined;
}

/** The request args for a call; refuses what would otherwise be sent somewhere unintended. */
export function toRequestArgs(
  name: string,
  input: unknown,
  queryOnly: boolean,
  queryKeys: ReadonlySet<string> | undefined,
): RequestArgs {
  if (input === undefined || input === null) return {};
  if (typeof input !== 'object' || Array.isArray(input))
    throw new TypeError(`${name}: the first argument must be an object, got ${typeof input}.`);
  const args = input as Record<string, unknown>;
  const keys = Object.keys(args);
  // Query-only routes take either request args (`{ query, fetchOptions }`) or the query itself.
  const isArgs = !queryOnly || keys.some((key) => REQUEST_ARG_KEYS.has(key));
  // Plain JavaScript has no type checker: a misplaced option (`signal`, `timeoutMs`) would
  // otherwise become a query parameter or be dropped without a word.
  const unknown = keys.filter((key) =>
    isArgs ? !REQUEST_ARG_KEYS.has(key) : isMisplacedOption(key, args[key], queryKeys),
  );
  if (unknown.length > 0) {
    const listed = unknown.map((key) => `'${key}'`).join(', ');
    const where = isArgs
      ? `unknown request argument ${listed}; a request takes query, params, body, extraHeaders and fetchOptions`
      : `${listed} is not a query parameter${queryKeys ? ` (this route's query takes ${[...queryKeys].join(', ')})` : ''}`;
    throw new TypeError(
      `${name}: ${where}. Per-call options go in the second argument ({ maxRetries, timeoutMs, idempotencyKey }), fetch options in { fetchOptions: { signal } }.`,
    );
  }
  return isArgs ? args : { query: args };
}

/**
 * Names of fetch and SDK options, which are never query parameters of this API. Other unknown
 * names with plain values go to the server, which refuses them with a 400 naming each one (and
 * which may know a parameter this SDK version does not).
 */
const OPTION_NAMES = new Set([
  ...REQUEST_OPTION_KEYS,
  'signal',
  'headers',
  'timeout',
  'retries',
  'credentials',
  'cache',
  'mode',
  'redirect',
  'keepalive',
  'dispatcher',
]);

/** A bare-query key that is surely an option put in the wrong place. */
function isMisplacedOption(
  key: string,
  value: unknown,
  queryKeys: ReadonlySet<string> | undefined,
): boolean {
  if (queryKeys?.has(key)) return false;
  // An object or function (an AbortSignal, a headers map) cannot be a query parameter's value.
  const plain =
    value === null || ['string', 'number', 'boolean', 'undefined'].includes(typeof value);
  return OPTION_NAMES.has(key) || !plain;
}

export function checkRequestOptions(name: string, options: unknown): RequestOptions | undefined {
  if (options === undefined || options === null) return undefined;
  if (typeof options !== 'object' || Array.isArray(options))
    throw new TypeError(`${name}: the second argument (request options) must be an object.`);
  const opts = options as Record<string, unknown>;
  const unknown = Object.keys(opts).filter((key) => !REQUEST_OPTION_KEYS.has(key));
  if (unknown.length > 0)
    throw new TypeError(
      `${name}: unknown request option ${unknown.map((key) => `'${key}'`).join(', ')}; request options are maxRetries, timeoutMs and idempotencyKey.`,
    );
  for (const key of ['maxRetries', 'timeoutMs'] as const) {
    const value = opts[key];
    if (value !== undefined && (typeof value !== 'number' || !Number.isFinite(value) || value < 0))
      throw new TypeError(
        `${name}: \`${key}\` must be a non-negative number, got ${JSON.stringify(value) ?? typeof value}.`,
      );
  }
  if (opts.idempotencyKey !== undefined && typeof opts.idempotencyKey !== 'string')
    throw new TypeError(`${name}: \`idempotencyKey\` must be a string.`);
  return opts;
}
