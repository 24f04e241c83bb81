/**
 * Builds the SDK from a ts-rest router: one namespace per router key, one method per route,
 * plus `<name>All` for list routes. Nothing here names a resource, so a route added to the
 * contract appears in the SDK with its types as soon as the contract is rebuilt.
 */
import {
  API_VERSION,
  contract,
  LIST_DEFAULTS,
  operationMetadata,
  type API_PREFIXES,
  type Contract,
} from '@platform/contract';
import {
  type ApiFetcher,
  type AppRoute,
  type AppRouter,
  type ClientInferResponses,
  type ContractNoBodyType,
  initClient,
  isAppRoute,
  type PartialClientInferRequest,
  type SuccessfulHttpStatusCode,
} from '@ts-rest/core';
import { PlatformPromise, type RawResponse } from './api-promise';
import { defaultSleep, HttpClient, type RequestHooks } from './http-client';
import { OAuthTokenSource, type OAuthOptions, staticTokenSource } from './oauth';
import { VERSION } from './version';

export interface ClientOptions {
  /** Where the API lives, without the version prefix, e.g. `https://api.example.com`. */
  baseUrl: string;
  /**
   * A personal access token (`pat_…`) or an OAuth 2.0 access token. Give this or `oauth`.
   */
  token?: string;
  /**
   * OAuth client credentials, with which the SDK gets and renews access tokens itself: from a
   * refresh token (rotated on every use; `onTokens` hands you the new one), or with the client
   * credentials grant. A token the API refuses (401) is renewed once and the call sent again.
   */
  oauth?: OAuthOptions;
  /** Retries after the first attempt for failures that are safe to repeat. Default 2. */
  maxRetries?: number;
  /** Longest `Retry-After` (seconds) the SDK waits for; a longer one throws at once. Default 60. */
  maxRetryAfterSeconds?: number;
  /** First backoff delay for 5xx and network errors; doubles per retry, with jitter. Default 500. */
  initialRetryDelayMs?: number;
  /** Upper bound of one backoff delay. Default 8000. */
  maxRetryDelayMs?: number;
  /** Per attempt, including reading the body. Default 60000. */
  timeoutMs?: number;
  /** A fetch implementation; default the global `fetch`. */
  fetch?: typeof fetch;
  /** Your app's name/version, sent before the SDK's own in `User-Agent`, e.g. `my-sis-sync/1.4`. */
  userAgent?: string;
  /** Extra headers on every request. */
  headers?: Record<string, string>;
  /** `/v1` (default) or its alias `/api/v1`. */
  apiPrefix?: (typeof API_PREFIXES)[number];
  /** How the SDK waits between retries; tests pass a fake to run fast. Default `setTimeout`, cut short by an abort. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /**
   * Send a generated `Idempotency-Key` with every POST that has none, so POSTs are retried on
   * 5xx and network errors without being applied twice. Default true.
   */
  idempotencyKeys?: boolean;
  /**
   * Called on every attempt (retries included): `onRequest` before sending (add tracing
   * headers here), `onResponse` with status, headers and duration, `onError` when no
   * response came. For logging, metrics and tracing.
   */
  hooks?: RequestHooks;
}

/** Options for one call, the second argument of every method: `list(query, { timeoutMs: 5000 })`. */
export interface RequestOptions {
  /** Retries after the first attempt for this call, instead of the client's `maxRetries`. */
  maxRetries?: number;
  /** Per attempt for this call, instead of the client's `timeoutMs`. */
  timeoutMs?: number;
  /** The `Idempotency-Key` for this POST instead of a generated one (e.g. your own record's id). */
  idempotencyKey?: string;
}

const REQUEST_OPTION_KEYS = new Set(['maxRetries', 'timeoutMs', 'idempotencyKey']);

// --- types derived from the router -------------------------------------------------------

/** The request arguments ts-rest infers for a route: `{ params?, query?, body?, extraHeaders?, fetchOptions? }`. */
export type RequestArgs<R extends AppRoute> = PartialClientInferRequest<R>;

/** The body of the route's 2xx response(s), as the contract declares it. */
export type SuccessBody<R extends AppRoute> = NoBodyAsUndefined<
  Extract<ClientInferResponses<R>, { status: SuccessfulHttpStatusCode }>['body']
>;

/** A `c.noBody()` response (204) resolves to undefined. */
type NoBodyAsUndefined<B> = B extends ContractNoBodyType ? undefined : B;

/** What a route's query accepts (the zod input type), or never if it has none. */
export type QueryInput<R extends AppRoute> = RequestArgs<R> extends { query?: infer Q } ? Q : never;

/** The item type of a list route's `data`. */
export type ListItem<R extends AppRoute> =
  SuccessBody<R> extends { data: readonly (infer I)[] } ? I : never;

type HasRequired<T> = Record<never, never> extends T ? false : true;

/** A route with nothing but a query (every collection) also takes the query object itself. */
type QueryOnly<R extends AppRoute> = 'params' extends keyof RequestArgs<R>
  ? false
  : 'body' extends keyof RequestArgs<R>
    ? false
    : 'query' extends keyof RequestArgs<R>
      ? true
      : false;

/** What a method returns: the body, or with `.withResponse()` the whole response. */
type Result<R extends AppRoute> = PlatformPromise<SuccessBody<R>>;

export type RouteMethod<R extends AppRoute> =
  QueryOnly<R> extends true
    ? HasRequired<QueryInput<R>> extends true
      ? {
          (query: QueryInput<R>, options?: RequestOptions): Result<R>;
          (args: RequestArgs<R>, options?: RequestOptions): Result<R>;
        }
      : {
          (query?: QueryInput<R>, options?: RequestOptions): Result<R>;
          (args: RequestArgs<R>, options?: RequestOptions): Result<R>;
        }
    : HasRequired<RequestArgs<R>> extends true
      ? (args: RequestArgs<R>, options?: RequestOptions) => Result<R>
      : (args?: RequestArgs<R>, options?: RequestOptions) => Result<R>;

/**
 * Every item of a list route, page after page. A collection takes its query; a nested list
 * (`webhookEndpoints.deliveriesAll`) takes the route's arguments, `{ params, query? }`.
 */
export type ListAllMethod<R extends AppRoute> =
  QueryOnly<R> extends true
    ? (query?: QueryInput<R>) => AsyncIterableIterator<ListItem<R>>
    : (args: RequestArgs<R>) => AsyncIterableIterator<ListItem<R>>;

/**
 * Reads `metadata.list` by key rather than by `extends { list: true }`: metadata written inline
 * in `c.router({...})` is a reverse-mapped type that fails structural checks it should pass.
 */
type IsListRoute<R extends AppRoute> = R['metadata'] extends infer M
  ? M extends object
    ? 'list' extends keyof M
      ? M['list' & keyof M] extends true
        ? true
        : false
      : false
    : false
  : false;

/** The SDK surface of a router: its routes and sub-routers, plus `<name>All` per list route. */
export type ClientFor<T extends AppRouter> = {
  [K in keyof T]: T[K] extends AppRoute
    ? RouteMethod<T[K]>
    : T[K] extends AppRouter
      ? ClientFor<T[K]>
      : never;
} & {
  [
    K in keyof T as T[K] extends AppRoute
      ? IsListRoute<T[K]> extends true
        ? `${K & string}All`
        : never
      : never
  ]: T[K] extends AppRoute ? ListAllMethod<T[K]> : never;
};

export type PlatformClient = ClientFor<Contract>;

// --- runtime -----------------------------------------------------------------------------

/** The keys ts-rest reads from a request-args object; anything else means "this is the query". */
const REQUEST_ARG_KEYS = new Set([
  'query',
  'params',
  'body',
  'headers',
  'extraHeaders',
  'fetchOptions',
  'overrideClientOptions',
  'cache',
  'next',
]);

/** The Platform API client: `createClient({ baseUrl, token }).students.list({ status: 'active' })`. */
export function createClient(options: ClientOptions): PlatformClient {
  return createClientFor(contract, options);
}

/** Builds a client for any ts-rest router; `createClient` is this for the Platform contract. */
export function createClientFor<T extends AppRouter>(
  router: T,
  options: ClientOptions,
): ClientFor<T> {
  const http = new HttpClient(resolveConfig(options));
  const api: ApiFetcher = (args) => {
    const { path, method, headers, body, fetchOptions } = args;
    const { signal, ...rest } = fetchOptions ?? {};
    const perCall = (args as unknown as Record<symbol, RequestOptions | undefined>)[
      REQUEST_OPTIONS
    ];
    return http.request({
      method,
      url: path,
      headers:
        perCall?.idempotencyKey === undefined
          ? headers
          : { ...headers, 'idempotency-key': perCall.idempotencyKey },
      body,
      signal,
      fetchOptions: rest,
      maxRetries: perCall?.maxRetries,
      timeoutMs: perCall?.timeoutMs,
    });
  };
  const raw = initClient(router, {
    baseUrl: baseUrlOf(options),
    api,
    validateResponse: false,
    throwOnUnknownStatus: false,
  }) as unknown as RawRouter;
  return build(router, raw) as ClientFor<T>;
}

/** Carries a call's `RequestOptions` through ts-rest, which hands extra argument keys to `api`. */
const REQUEST_OPTIONS = Symbol('platform.requestOptions');

type RawRoute = (args?: Record<string | symbol, unknown>) => Promise<{
  status: number;
  body: unknown;
  headers: Headers;
  retriesTaken?: number;
}>;
interface RawRouter {
  [key: string]: RawRoute | RawRouter;
}
type SdkMethod = (input?: unknown, options?: unknown) => PlatformPromise<unknown>;

function build(router: AppRouter, raw: RawRouter, prefix = ''): Record<string, unknown> {
  const sdk: Record<string, unknown> = {};
  for (const [key, entry] of Object.entries(router)) {
    if (!isAppRoute(entry)) {
      sdk[key] = build(entry, raw[key] as RawRouter, `${prefix}${key}.`);
      continue;
    }
    const call = raw[key] as RawRoute;
    const queryOnly = isQueryOnly(entry);
    const name = `${prefix}${key}`;
    const queryKeys = queryOnly ? queryKeysOf(entry) : undefined;
    const method: SdkMethod = (input, options) => {
      let raw: Promise<RawResponse<unknown>>;
      try {
        const args = toRequestArgs(name, input, queryOnly, queryKeys);
        const perCall = checkRequestOptions(name, options);
        raw = call({ ...args, [REQUEST_OPTIONS]: perCall }).then((response) => ({
          data: response.body,
          status: response.status,
          headers: response.headers,
          requestId: response.headers.get('x-request-id') ?? undefined,
          retriesTaken: response.retriesTaken ?? 0,
        }));
      } catch (error) {
        // A misuse is reported like a failed call: through the promise, never synchronously.
        raw = Promise.reject(error instanceof Error ? error : new TypeError(String(error)));
      }
      return new PlatformPromise(raw);
    };
    sdk[key] = method;
    if (operationMetadata(entry)?.list) {
      const allName = `${key}All`;
      if (allName in router)
        throw new Error(
          `Route '${allName}' clashes with the auto-pagination method of list route '${key}'.`,
        );
      sdk[allName] = queryOnly
        ? (query?: Record<string, unknown>) => paginate(method, query ?? {})
        : (args: Record<string, unknown>) =>
            paginate(
              (query) => method({ ...args, query }),
              (args.query as Record<string, unknown> | undefined) ?? {},
            );
    }
  }
  return sdk;
}

/** Mirrors the `QueryOnly` type: a query, no path parameters, no body. */
function isQueryOnly(route: AppRoute): boolean {
  return (
    !('body' in route) &&
    !/:[A-Za-z0-9_]/.test(route.path) &&
    route.query !== undefined &&
    route.query !== null
  );
}

/** The ts-rest args for a call; refuses what would otherwise be sent somewhere unintended. */
function toRequestArgs(
  name: string,
  input: unknown,
  queryOnly: boolean,
  queryKeys: ReadonlySet<string> | undefined,
): Record<string, unknown> {
  if (input === undefined || input === null) return {};
  if (typeof input !== 'object' || Array.isArray(input))
    throw new TypeError(`${name}: the first argument must be an object, got ${typeof input}.`);
  const args = input as Record<string, unknown>;
  const keys = Object.keys(args);
  // Query-only routes take either ts-rest args (`{ query, fetchOptions }`) or the query itself.
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

function checkRequestOptions(name: string, options: unknown): RequestOptions | undefined {
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

/**
 * The parameter names of a route's query schema (a zod object, possibly inside effects), so a
 * bare query can be checked; undefined when the schema is not a zod object (nothing checked).
 */
function queryKeysOf(route: AppRoute): ReadonlySet<string> | undefined {
  let schema: unknown = route.query;
  for (let depth = 0; depth < 5 && typeof schema === 'object' && schema !== null; depth++) {
    const candidate = schema as {
      shape?: unknown;
      _def?: { schema?: unknown; innerType?: unknown };
    };
    if (typeof candidate.shape === 'object' && candidate.shape !== null)
      return new Set(Object.keys(candidate.shape));
    schema = candidate._def?.schema ?? candidate._def?.innerType;
  }
  return undefined;
}

/** Every item of every page, one request per page, until the server says there is no next page. */
async function* paginate(
  list: (query: Record<string, unknown>) => Promise<unknown>,
  query: Record<string, unknown>,
): AsyncIterableIterator<unknown> {
  // Fewest requests against the rate limit unless the caller chose a page size.
  const perPage = query.per_page ?? LIST_DEFAULTS.maxPerPage;
  let page = typeof query.page === 'number' ? query.page : LIST_DEFAULTS.page;
  for (;;) {
    const body = (await list({ ...query, page, per_page: perPage })) as ListBody;
    yield* body.data;
    if (body.data.length === 0 || body.links.next === null || page >= body.meta.total_pages) return;
    page++;
  }
}

interface ListBody {
  data: unknown[];
  meta: { total_pages: number };
  links: { next: string | null };
}

function resolveConfig(options: ClientOptions) {
  const hasToken = typeof options.token === 'string' && options.token.trim() !== '';
  if (hasToken === Boolean(options.oauth)) {
    throw new TypeError(
      'createClient: pass either `token` (a personal access token pat_… or an OAuth access token) or `oauth` (client credentials for the SDK to get tokens with).',
    );
  }
  if (options.oauth && (typeof options.oauth.clientId !== 'string' || !options.oauth.clientId)) {
    throw new TypeError('createClient: `oauth.clientId` is required.');
  }
  const fetchImpl = options.fetch ?? globalThis.fetch;
  if (typeof fetchImpl !== 'function') {
    throw new TypeError(
      'createClient: no global fetch here (Node 20+ and browsers have one); pass `fetch`.',
    );
  }
  const nonNegative = (name: string, value: number | undefined, fallback: number) => {
    const result = value ?? fallback;
    if (!Number.isFinite(result) || result < 0)
      throw new TypeError(
        `createClient: \`${name}\` must be a non-negative number, got ${result}.`,
      );
    return result;
  };
  const sdkAgent = `platform-client-node/${VERSION}`;
  return {
    tokens: options.oauth
      ? new OAuthTokenSource(
          options.oauth,
          options.oauth.tokenUrl ?? tokenUrlOf(options),
          (input: RequestInfo | URL, init?: RequestInit) => fetchImpl(input, init),
          nonNegative('timeoutMs', options.timeoutMs, 60_000),
        )
      : staticTokenSource(options.token!),
    maxRetries: Math.floor(nonNegative('maxRetries', options.maxRetries, 2)),
    maxRetryAfterMs: nonNegative('maxRetryAfterSeconds', options.maxRetryAfterSeconds, 60) * 1000,
    initialRetryDelayMs: nonNegative('initialRetryDelayMs', options.initialRetryDelayMs, 500),
    maxRetryDelayMs: nonNegative('maxRetryDelayMs', options.maxRetryDelayMs, 8000),
    timeoutMs: nonNegative('timeoutMs', options.timeoutMs, 60_000),
    userAgent: options.userAgent ? `${options.userAgent} ${sdkAgent}` : sdkAgent,
    headers: options.headers ?? {},
    // Never called as a method of another object: browsers throw "Illegal invocation" then.
    fetch: (input: RequestInfo | URL, init?: RequestInit) => fetchImpl(input, init),
    sleep: options.sleep ?? defaultSleep,
    idempotencyKeys: options.idempotencyKeys ?? true,
    hooks: options.hooks,
  };
}

/** The authorization server's token endpoint on the API's origin. */
function tokenUrlOf(options: ClientOptions): string {
  let url: URL;
  try {
    url = new URL(options.baseUrl);
  } catch {
    return `${options.baseUrl}/oauth/token`; // baseUrlOf reports the bad URL
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}/oauth/token`;
}

/** Contract paths start with `/v1`; `/api/v1` is the same API under an extra segment. */
function baseUrlOf(options: ClientOptions): string {
  let url: URL;
  try {
    url = new URL(options.baseUrl);
  } catch {
    throw new TypeError(
      `createClient: \`baseUrl\` must be an absolute URL like https://api.example.com, got '${options.baseUrl}'.`,
    );
  }
  const prefix = options.apiPrefix ?? `/${API_VERSION}`;
  const version = `/${API_VERSION}`;
  if (!prefix.endsWith(version))
    throw new TypeError(`createClient: \`apiPrefix\` must end with ${version}, got '${prefix}'.`);
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}${prefix.slice(0, -version.length)}`;
}
