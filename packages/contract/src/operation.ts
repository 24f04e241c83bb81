import { type Deprecation, operationDeprecation } from './deprecation';
import type { Scope } from './scopes';

/**
 * Metadata every route carries. The server's scope guard reads `scope` from here, so a
 * route cannot exist without saying which scope it needs.
 */
export interface OperationMetadata {
  /** The scope a token needs; `null` (declared, never omitted) means any valid token will do. */
  scope: Scope | null;
  /** A collection read through the list convention; the SDK adds `listAll` for these. */
  list?: boolean;
  /**
   * A change feed read after a cursor (`after`, `next_cursor`, `wait`): the SDKs add `follow`
   * to its namespace, which long-polls and resumes from the last cursor.
   */
  feed?: boolean;
  /**
   * The SDKs' name for the operation (`changes.list`) when it differs from its contract key
   * (`events.changes`): the SDKs put the method there, and keep the key's name as a deprecated
   * alias for the rest of the 0.x minor. The OpenAPI document carries it as `x-sdk-name`; the
   * operationId stays the contract key.
   */
  sdkName?: `${string}.${string}`;
  /**
   * The response field that carries a secret shown only once (a token, a signing or client
   * secret). Such a response is never stored for an `Idempotency-Key` replay: a repeat is a 409
   * naming the record instead, so no secret sits in the idempotency store.
   */
  oneTimeSecret?: string;
  /**
   * The delegation rule (nothing made or changed over the API outgrows or outlives the
   * credential that did it) applies, and how:
   * - `credential`: the operation makes, rotates or revokes a credential. Its scopes must be
   *   within the caller's (403 `forbidden`), and what it makes expires no later than the caller.
   * - `webhook_endpoint`: the operation makes or changes a webhook endpoint. The caller must hold
   *   the read scope of every event type it will deliver (403 `forbidden`), and the endpoint is
   *   bound to the caller's credential: it is disabled when that is revoked or expires.
   * - `transfer`: an admin hands a credential or endpoint to another member (403 `forbidden` for
   *   anyone else); it then belongs to that member, is bound to no credential of the caller's,
   *   and does no more than the member's role allows.
   * The contract walk tests every operation flagged here, and fails on an operation that hands
   * out scopes, events, an expiry or a secret without a flag.
   */
  delegation?: 'credential' | 'webhook_endpoint' | 'transfer';
  /**
   * The operation is deprecated: the server answers it with `Deprecation` (and `Sunset` once
   * `sunset` is set) and a `Link` to the migration note, and the OpenAPI document marks it.
   * For a single query parameter or body field use `deprecated(schema, …)` instead.
   */
  deprecated?: Deprecation;
  /**
   * The operation is about the calling user (`GET /v1/user`): the token must act for a member,
   * an OAuth token a user approved or a personal access token a member made over the API. Any
   * other token is refused with 403 `forbidden`, whatever its scopes.
   */
  requiresUser?: boolean;
  /**
   * The operation changes a sandbox organization (`POST /v1/sandbox/trigger`): a live
   * organization's token is refused with 403 `forbidden`, whatever its scopes.
   */
  sandbox?: boolean;
  /**
   * The success response is a file in one of these media types (an export's NDJSON or CSV), not
   * JSON: the OpenAPI document says so, and the SDKs hand it back unparsed.
   */
  file?: readonly string[];
  /**
   * The request body is a file (`multipart/form-data`) that the handler streams as it arrives.
   * Such a handler applies an `Idempotency-Key` itself once it has read the file (the key's
   * fingerprint covers the file's bytes), instead of the server holding one transaction open
   * for the whole upload.
   */
  upload?: boolean;
  /**
   * Units of the organization's rate limit one request spends (a whole number, default 1). Heavy
   * operations (an export reads a whole collection) cost more, as in GitHub's and Shopify's
   * APIs; the figures and why are in docs/decisions/0019-rate-limit-costs.md. The OpenAPI
   * document carries it as `x-rate-limit-cost`.
   */
  cost?: number;
}

/** What a request costs when its operation declares no `cost`. */
export const DEFAULT_OPERATION_COST = 1;

export function operation<const M extends OperationMetadata>(metadata: M): M {
  if (metadata.deprecated) operationDeprecation(metadata.deprecated);
  if (
    metadata.cost !== undefined &&
    (!Number.isSafeInteger(metadata.cost) || metadata.cost < DEFAULT_OPERATION_COST)
  ) {
    throw new Error(
      `an operation's cost must be a whole number of at least 1, not ${metadata.cost}`,
    );
  }
  return metadata;
}

/** The units of the rate limit a request of this operation spends. */
export function operationCost(metadata: OperationMetadata): number {
  return metadata.cost ?? DEFAULT_OPERATION_COST;
}

export function operationMetadata(route: { metadata?: unknown }): OperationMetadata | undefined {
  const metadata = route.metadata as Partial<OperationMetadata> | undefined;
  return metadata && (typeof metadata.scope === 'string' || metadata.scope === null)
    ? (metadata as OperationMetadata)
    : undefined;
}

/**
 * Options of every resource router: responses must use a status the route declares. Applied per
 * resource rather than once on the root, so each router's type stays small enough to emit.
 */
export const ROUTER_OPTIONS = { strictStatusCodes: true } as const;
