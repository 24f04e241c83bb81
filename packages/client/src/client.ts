/**
 * Builds the SDK from the generated route table (generated/routes.ts): one namespace per
 * resource, one method per operation, plus `<name>All` for list operations. The table and the
 * types are generated from the contract, so the client carries no schema library and no
 * contract at runtime.
 */
import { PagePromise, PlatformPromise, type RawResponse } from './api-promise';
import { API_VERSION, MAX_PER_PAGE, ROUTES, type PlatformClient } from './generated/routes';
import { FeedFollower, type FeedPage, type FollowOptions } from './feed';
import { defaultSleep, HttpClient, type RequestHooks } from './http-client';
import { OAuthTokenSource, type OAuthOptions, staticTokenSource } from './oauth';
import type {
  GenericRequestArgs,
  RequestOptions,
  RouteSpec,
  RouteTable,
  UploadBody,
} from './route-types';
import { VERSION } from './version';
import { exportHelpers, type ExportHelpers } from './exports';
import { importHelpers, type ImportHelpers } from './imports';
import {
  checkRequestOptions,
  isQueryOnly,
  nextPageArgs,
  type RequestArgs,
  toRequestArgs,
} from './request-args';

/** The path prefixes the API answers on: `/v1`, and the same API under `/api/v1`. */
export type ApiPrefix = `/${typeof API_VERSION}` | `/api/${typeof API_VERSION}`;

export interface ClientOptions {
  /**
   * Where the API lives, e.g. `https://api.example.com`. A trailing `/v1` is dropped (the
   * operations add it), so `https://api.example.com/v1` works too.
   */
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
  apiPrefix?: ApiPrefix;
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

// --- runtime -----------------------------------------------------------------------------

/** The client, with the hand-written helpers beside the generated operations. */
export type Client = PlatformClient & {
  exports: PlatformClient['exports'] & ExportHelpers;
  imports: PlatformClient['imports'] & ImportHelpers;
};

/** The Platform API client: `createClient({ baseUrl, token }).students.list({ status: 'active' })`. */
export function createClient(options: ClientOptions): Client {
  const config = resolveConfig(options);
  const http = new HttpClient(config);
  const client = buildClient(ROUTES, options, http) as Record<string, unknown>;
  client.request = buildRequest(options, http);
  const typed = client as unknown as Client;
  Object.assign(
    typed.exports,
    exportHelpers(
      http,
      baseUrlOf(options),
      async (id) => await typed.exports.retrieve(id),
      config.sleep,
    ),
  );
  Object.assign(
    typed.imports,
    importHelpers(async (id) => await typed.imports.retrieve(id), config.sleep),
  );
  return typed;
}

/** A client for any route table: `createClient` is this for the Platform API's table. */
export function buildClient(
  table: RouteTable,
  options: ClientOptions,
  http = new HttpClient(resolveConfig(options)),
): Record<string, Record<string, unknown>> {
  const base = baseUrlOf(options);
  const sdk: Record<string, Record<string, unknown>> = {};
  for (const [namespace, routes] of Object.entries(table)) {
    const methods: Record<string, unknown> = {};
    for (const [key, route] of Object.entries(routes)) {
      const name = `${namespace}.${key}`;
      const queryOnly = isQueryOnly(route);
      const queryKeys = Array.isArray(route.query) ? new Set<string>(route.query) : undefined;
      const pathParams = [...route.path.matchAll(/\{(\w+)\}|:(\w+)/g)].map((m) => (m[1] ?? m[2])!);
      const call = (input: unknown, callOptions: unknown): Promise<RawResponse<unknown>> => {
        if (input instanceof TypeError) return Promise.reject(input);
        try {
          const args = toRequestArgs(name, input, queryOnly, queryKeys);
          if (route.list) args.query = withPageSize(args.query);
          const perCall = checkRequestOptions(name, callOptions);
          return send(http, base, name, route, args, perCall);
        } catch (error) {
          // A misuse is reported like a failed call: through the promise, never synchronously.
          return Promise.reject(error instanceof Error ? error : new TypeError(String(error)));
        }
      };
      // `retrieve('stu_…')`: the one path parameter may come first, the other args after it.
      const normalise = (input: unknown, second: unknown, third: unknown): [unknown, unknown] => {
        if (typeof input !== 'string' || pathParams.length !== 1) return [input, second];
        const param = pathParams[0]!;
        if (
          second !== undefined &&
          (typeof second !== 'object' || second === null || Array.isArray(second))
        )
          return [
            new TypeError(
              `${name}: after the ${param} comes an arguments object ({ body, query, extraHeaders, fetchOptions }), got ${second === null ? 'null' : typeof second}.`,
            ),
            undefined,
          ];
        const rest = (second ?? {}) as Record<string, unknown>;
        return [{ ...rest, params: { ...(rest.params as object), [param]: input } }, third];
      };
      const method = (input?: unknown, second?: unknown, third?: unknown) => {
        const [args, callOptions] = normalise(input, second, third);
        const raw = call(args, callOptions);
        if (!route.list) return new PlatformPromise(raw);
        return new PagePromise(raw as Promise<RawResponse<ListBody>>, () =>
          walkPages(raw as Promise<RawResponse<ListBody>>, (next) =>
            call(nextPageArgs(args, queryOnly, next), callOptions),
          ),
        );
      };
      methods[key] = method;
      if (route.list) {
        const allName = `${key}All`;
        if (allName in routes)
          throw new Error(
            `Route '${allName}' clashes with the auto-pagination method of list route '${key}'.`,
          );
        methods[allName] = (input?: unknown, second?: unknown, third?: unknown) =>
          (method(input, second, third) as PagePromise<unknown, unknown>)[Symbol.asyncIterator]();
      }
      if (route.feed) {
        if ('follow' in routes)
          throw new Error(`Route 'follow' clashes with the follower of feed route '${key}'.`);
        methods.follow = follower(method);
      }
    }
    sdk[namespace] = methods;
  }
  return sdk;
}

/**
 * `follow` over a feed route's method. The follower retries by itself, for as long as it takes:
 * the client's own retries would only delay its backoff.
 */
function follower(method: (input?: unknown, second?: unknown) => unknown) {
  return (options: FollowOptions) =>
    new FeedFollower(
      (query, signal) =>
        method(
          { query, ...(signal && { fetchOptions: { signal } }) },
          { maxRetries: 0 },
        ) as Promise<FeedPage<{ cursor: string | null }>>,
      options,
    );
}

/** The generic request: any path under the version, with the client's auth, retries and errors. */
export function buildRequest(
  options: ClientOptions,
  http = new HttpClient(resolveConfig(options)),
) {
  const base = baseUrlOf(options);
  const version = `/${API_VERSION}`;
  return <T = unknown>(
    method: string,
    path: string,
    args: GenericRequestArgs = {},
    callOptions?: RequestOptions,
  ): PlatformPromise<T> => {
    const name = `request(${JSON.stringify(method)}, ${JSON.stringify(path)})`;
    let raw: Promise<RawResponse<unknown>>;
    try {
      if (typeof method !== 'string' || !/^[A-Za-z]+$/.test(method))
        throw new TypeError(`${name}: the method must be an HTTP method like 'GET'.`);
      if (typeof path !== 'string' || !(path === version || path.startsWith(`${version}/`)))
        throw new TypeError(
          `${name}: the path must start with ${version}/, e.g. '${version}/students'.`,
        );
      if (typeof args !== 'object' || args === null || Array.isArray(args))
        throw new TypeError(
          `${name}: the third argument must be an object ({ query, body, extraHeaders, fetchOptions }).`,
        );
      const unknownKeys = Object.keys(args).filter((k) => !GENERIC_ARG_KEYS.has(k));
      if (unknownKeys.length > 0)
        throw new TypeError(
          `${name}: unknown argument ${unknownKeys.map((k) => `'${k}'`).join(', ')}; it takes query, body, extraHeaders and fetchOptions.`,
        );
      const route: RouteSpec = {
        method: method.toUpperCase() as RouteSpec['method'],
        path,
        query: true,
        body: args.body !== undefined,
      };
      raw = send(http, base, name, route, args, checkRequestOptions(name, callOptions));
    } catch (error) {
      raw = Promise.reject(error instanceof Error ? error : new TypeError(String(error)));
    }
    return new PlatformPromise(raw as Promise<RawResponse<T>>);
  };
}

const GENERIC_ARG_KEYS = new Set(['query', 'body', 'extraHeaders', 'fetchOptions']);

/** The page size auto-paging and list calls ask for unless the caller chose one: the largest. */
function withPageSize(query: Record<string, unknown> | undefined): Record<string, unknown> {
  // Fewest requests against the rate limit unless the caller chose a page size.
  return query?.per_page === undefined ? { ...query, per_page: MAX_PER_PAGE } : query;
}

/**
 * Every item of the first page (already requested) and of each following page, fetched lazily:
 * each next page is the cursor `links.next` carries, so records created or deleted during the
 * walk never make it skip or repeat one (a server that sends no cursor is paged by number).
 */
async function* walkPages(
  first: Promise<RawResponse<ListBody>>,
  fetchPage: (next: { cursor: string } | { page: number }) => Promise<RawResponse<unknown>>,
): AsyncIterableIterator<unknown> {
  let body = (await first).data;
  for (;;) {
    yield* body.data;
    if (body.data.length === 0 || body.links.next === null) return;
    // Absolute by the contract; read leniently, as a relative link would be.
    const cursor = new URL(body.links.next, 'http://next.invalid').searchParams.get('cursor');
    if (cursor === null && body.meta.page >= body.meta.total_pages) return;
    const next = cursor === null ? { page: body.meta.page + 1 } : { cursor };
    body = (await fetchPage(next)).data as ListBody;
  }
}

async function send(
  http: HttpClient,
  base: string,
  name: string,
  route: RouteSpec,
  args: RequestArgs,
  perCall: RequestOptions | undefined,
): Promise<RawResponse<unknown>> {
  const url = `${base}${pathOf(name, route.path, args.params)}${queryString(name, args.query)}`;
  const headers: Record<string, string> = { ...args.extraHeaders };
  const hasBody = route.body === true && args.body !== undefined;
  if (hasBody && !route.upload) headers['content-type'] = 'application/json';
  if (perCall?.idempotencyKey !== undefined) headers['idempotency-key'] = perCall.idempotencyKey;
  const { signal, ...fetchOptions } = args.fetchOptions ?? {};
  const response = await http.request({
    method: route.method,
    url,
    headers,
    body: !hasBody
      ? undefined
      : route.upload
        ? uploadForm(args.body as UploadBody, args.query)
        : JSON.stringify(args.body),
    signal: signal ?? undefined,
    fetchOptions,
    maxRetries: perCall?.maxRetries,
    timeoutMs: perCall?.timeoutMs,
  });
  return {
    data: response.body,
    status: response.status,
    headers: response.headers,
    requestId: response.headers.get('x-request-id') ?? undefined,
    retriesTaken: response.retriesTaken ?? 0,
  };
}

/** MIME types of the formats an upload names in its query (`format=csv`). */
const UPLOAD_TYPES: Readonly<Record<string, string>> = {
  csv: 'text/csv',
  ndjson: 'application/x-ndjson',
};

/** An upload's multipart body: its file as the part `file`, typed after `query.format` if given. */
function uploadForm(body: UploadBody, query: Record<string, unknown> | undefined): FormData {
  const format = typeof query?.format === 'string' ? UPLOAD_TYPES[query.format] : undefined;
  const file =
    body.file instanceof Blob && (format === undefined || body.file.type === format)
      ? body.file
      : new Blob([body.file as BlobPart], { type: format ?? '' });
  const form = new FormData();
  form.append(
    'file',
    file,
    body.filename ?? (body.file instanceof File ? body.file.name : 'upload'),
  );
  return form;
}

/** `/v1/students/{id}` with each parameter filled in, encoded so it stays one path segment. */
function pathOf(name: string, template: string, params: Record<string, unknown> = {}): string {
  return template.replace(/\{(\w+)\}|:(\w+)/g, (_, braced?: string, colon?: string) => {
    const key = (braced ?? colon)!;
    const value = params[key];
    if (typeof value !== 'string' && typeof value !== 'number')
      throw new TypeError(`${name}: path parameter '${key}' is required (params: { ${key} }).`);
    return encodeURIComponent(String(value));
  });
}

/** `?a=1&b=x`, leaving out what is undefined; a Date is sent as its ISO 8601 instant. */
function queryString(name: string, query: Record<string, unknown> | undefined): string {
  if (!query) return '';
  const pairs: string[] = [];
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined) continue;
    let text: string;
    if (value instanceof Date) text = value.toISOString();
    else if (typeof value === 'string') text = value;
    else if (typeof value === 'number' || typeof value === 'boolean') text = String(value);
    else
      throw new TypeError(
        `${name}: query parameter '${key}' must be a string, number, boolean or Date, got ${value === null ? 'null' : typeof value}.`,
      );
    pairs.push(`${encodeURIComponent(key)}=${encodeURIComponent(text)}`);
  }
  return pairs.length > 0 ? `?${pairs.join('&')}` : '';
}

interface ListBody {
  data: unknown[];
  meta: { page: number; total_pages: number };
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
      'createClient: no global fetch here (Node 18+ and browsers have one); pass `fetch`.',
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
  return `${url.origin}${basePath(url)}/oauth/token`;
}

/**
 * The base URL's path without trailing slashes and without a trailing `/v1`: operation paths
 * start with `/v1`, so `https://api.example.com/v1/` means the same as `https://api.example.com`
 * (as in the PHP and Python SDKs).
 */
function basePath(url: URL): string {
  return url.pathname.replace(/\/+$/, '').replace(new RegExp(`/${API_VERSION}$`), '');
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
  return `${url.origin}${basePath(url)}${prefix.slice(0, -version.length)}`;
}
