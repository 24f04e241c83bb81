// The shapes the client is built from: the generated route table (generated/routes.ts) and the
// arguments every method takes.
import type { PlatformPromise } from './api-promise';

/** How to call one operation. */
export interface RouteSpec {
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  /** With `{name}` for each path parameter: `/v1/students/{id}`. */
  path: string;
  /**
   * The query parameters it takes, as sent (`created_at[gte]`), to tell a query from misplaced
   * options; `true` when it takes a query whose names are not known here.
   */
  query?: readonly string[] | true;
  /** It takes a JSON body (with `upload`: a file, sent as multipart/form-data). */
  body?: boolean;
  /** Its body is a file (`UploadBody`), sent as the multipart part `file`. */
  upload?: boolean;
  /** It answers a page (`{ data, meta, links }`): the client adds `<name>All`. */
  list?: boolean;
  /** It reads a change feed after a cursor: the client adds `follow` to its namespace. */
  feed?: boolean;
}

/**
 * The body of an upload (`imports.create`): the file as a `Blob` (in Node, `fs.openAsBlob(path)`
 * streams a file from disk without reading it into memory), bytes or text, and the name it is
 * sent under. Without `format` in the query the server reads the format from the Blob's type or
 * the name's extension (`.csv`, `.ndjson`).
 */
export interface UploadBody {
  file: Blob | Uint8Array | string;
  filename?: string;
}

/** Namespaces of operations: `{ students: { list: RouteSpec, … }, … }`. */
export type RouteTable = Readonly<Record<string, Readonly<Record<string, RouteSpec>>>>;

/** `fetch` options for one call; `signal` cancels it (retries included). */
export type FetchOptions = Omit<RequestInit, 'method' | 'headers' | 'body'>;

/** What every method's argument object may carry besides `params`, `query` and `body`. */
export interface CallArgs {
  /** Headers for this call only, e.g. `Idempotency-Key` or `X-Request-Id`. */
  extraHeaders?: Record<string, string>;
  fetchOptions?: FetchOptions;
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

/** Arguments of `client.request()` besides the method and the path. */
export interface GenericRequestArgs {
  /** Query parameters; a Date is sent as its ISO 8601 instant. */
  query?: Record<string, string | number | boolean | Date | undefined>;
  /** Sent as JSON. */
  body?: unknown;
  extraHeaders?: Record<string, string>;
  fetchOptions?: FetchOptions;
}

/** The escape hatch every client has besides its resources. */
export interface GenericRequest {
  /**
   * Calls any path of the API (`/v1/…`) with the client's auth, retries, idempotency keys and
   * errors: for an operation newer than this SDK. Resolves to the parsed JSON body; like every
   * method, `.withResponse()` gives status, headers and request id.
   */
  request<T = unknown>(
    method: string,
    path: `/${string}`,
    args?: GenericRequestArgs,
    options?: RequestOptions,
  ): PlatformPromise<T>;
}
