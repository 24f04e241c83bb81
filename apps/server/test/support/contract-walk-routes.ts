/**
 * The contract walk's view of the contract (test/contract-walk.e2e-spec.ts): every route, the
 * tables of routes each part of the walk goes through, and what a route's schemas say.
 */
import {
  API_PREFIXES,
  contract,
  EVENT_READ_SCOPES,
  EventSchema,
  type IdKind,
  operationMetadata,
  type Scope,
} from '@platform/contract';
import { type AppRoute, type AppRouter, ContractNoBody, isAppRoute } from '@ts-rest/core';
import type { RawResponse } from './server';
import { isReference } from './example-body';

/** Any route's answer as the walk reads it: a record, a page of records, or a problem. */
export type WalkedBody = Record<string, unknown> & {
  data?: Record<string, unknown>[];
  meta?: { total: number };
};
export type WalkResponse = RawResponse<WalkedBody>;

/** The ids of the records made so far, by collection. */
export type Refs = Record<string, string>;

export interface WalkedRoute {
  /** Where it sits in the contract, e.g. `enrollments.activate`. */
  key: string;
  route: AppRoute;
  /** `GET /v1/students/:id` */
  name: string;
}

export function walk(router: AppRouter, at: string[] = []): WalkedRoute[] {
  return Object.entries(router).flatMap(([key, entry]): WalkedRoute[] =>
    isAppRoute(entry)
      ? [{ key: [...at, key].join('.'), route: entry, name: `${entry.method} ${entry.path}` }]
      : walk(entry, [...at, key]),
  );
}

export const ROUTES = walk(contract);
/**
 * Routes about the caller's own token (`GET /v1/token`): they declare `scope: null` (any valid
 * token) and belong to no collection. Only these may; every other route names its scope.
 */
/** Routes that change a sandbox (`POST /v1/sandbox/trigger`): a live token is refused. */
export const SANDBOX_ROUTES = ROUTES.filter((r) => operationMetadata(r.route)?.sandbox === true);
export const SELF_ROUTES = ROUTES.filter(
  (r) => operationMetadata(r.route)?.scope === null && !SANDBOX_ROUTES.includes(r),
);
export const SELF_PATHS = [
  '/v1/token',
  '/v1/user',
  '/v1/user/password',
  '/v1/user/email',
  '/v1/user/sessions',
  '/v1/user/sessions/:id',
  '/v1/user/sessions/sign_out_others',
];
/** Self routes about the calling member: they need a token acting for one (403 otherwise). */
export const USER_ROUTES = SELF_ROUTES.filter((r) => operationMetadata(r.route)?.requiresUser);
export const TOKEN_SELF_ROUTES = SELF_ROUTES.filter((r) => !USER_ROUTES.includes(r));
/** Reference fields named otherwise than their kind: `member_id` is a user (`usr_…`). */
export const FIELD_KINDS: Record<string, IdKind> = { member_id: 'user' };
export const COLLECTION_ROUTES = ROUTES.filter(
  (r) => !SELF_ROUTES.includes(r) && !SANDBOX_ROUTES.includes(r),
);
/** Routes to one record of an organization (the caller's own sessions are no organization's). */
export const ID_ROUTES = COLLECTION_ROUTES.filter((r) => r.route.path.includes('/:id'));
export const LIST_ROUTES = ROUTES.filter((r) => operationMetadata(r.route)?.list === true);
/** Top-level collections; a nested list (`/v1/webhook_endpoints/:id/deliveries`) is an id route. */
export const COLLECTION_LIST_ROUTES = LIST_ROUTES.filter((r) => !r.route.path.includes('/:id'));

/** The collection a route belongs to: `/v1/exam_results/:id/publish` → `exam_results`. */
export function collectionOf(route: AppRoute): string {
  const match = /^\/v1\/([a-z_]+)(?:\/|$)/.exec(route.path);
  if (!match) throw new Error(`Route ${route.method} ${route.path} is not under /v1/<collection>`);
  return match[1]!;
}

export function scopeOf(route: AppRoute): Scope {
  const scope = operationMetadata(route)?.scope ?? undefined;
  if (!scope) throw new Error(`Route ${route.method} ${route.path} has no metadata.scope`);
  return scope;
}

/** The body schema's object shape, through `.optional()`, `.default()`, refinements. */
export function objectShape(schema: unknown): Record<string, unknown> | undefined {
  let current = schema as { shape?: Record<string, unknown>; _def?: Record<string, unknown> };
  for (let depth = 0; current && depth < 10; depth++) {
    if (current.shape && typeof current.shape === 'object') return current.shape;
    current = (current._def?.innerType ?? current._def?.schema) as typeof current;
  }
  return undefined;
}

export interface ZodLike {
  safeParse(value: unknown): { success: boolean; error?: unknown };
}

export function bodySchemaOf(route: AppRoute): ZodLike | 'none' {
  if (route.method === 'GET' || !('body' in route) || route.body === ContractNoBody) return 'none';
  // An upload's body is a file, not JSON: `send` makes one (contract-walk-requests.ts).
  if (isUpload(route)) return 'none';
  return route.body as ZodLike;
}

/** A route whose body is a file (`POST /v1/imports`), sent as multipart/form-data. */
export function isUpload(route: AppRoute): boolean {
  return operationMetadata(route)?.upload === true;
}

/** Create routes: POST to the collection itself. */
export function isCreateRoute(route: AppRoute): boolean {
  return route.method === 'POST' && route.path === `/v1/${collectionOf(route)}`;
}

/** Body fields that name another record: `student_id`, `exam_id`, … */
export function referenceFieldsOf(route: AppRoute): string[] {
  const schema = bodySchemaOf(route);
  if (schema === 'none') return [];
  return Object.keys(objectShape(schema) ?? {}).filter(isReference);
}

export const REFERENCE_ROUTES = ROUTES.filter(
  (r) => isCreateRoute(r.route) && referenceFieldsOf(r.route).length > 0,
);

/** Fields through which an operation hands out authority: what a credential or endpoint can do, and for how long. */
export const AUTHORITY_FIELDS = ['scopes', 'events', 'expires_at'];
/**
 * Routes whose authority-looking fields hand out nothing: an export's `expires_at` is when its
 * file is deleted, and downloading the file still needs a token with the export's scopes. An
 * export's download link does hand out a secret, but no scope or record to walk: it reads one
 * file, is bound to the caller's credential and member (checked at each use) and expires no
 * later than the caller; export-download-links.e2e-spec.ts holds it to that. An email change's
 * link only confirms a new address for the calling member, who gave their current password: it
 * holds no scope, goes to the new address (the caller sees it only from a server without mail),
 * and is gone with the member (email-change.e2e-spec.ts).
 */
export const NOT_AUTHORITY: readonly string[] = [
  'exports.create',
  'exports.createDownloadLink',
  'user.changeEmail',
];

/** The fields of the route's body and of its success responses. */
export function fieldsOf(route: AppRoute): string[] {
  const body = bodySchemaOf(route);
  const responses = Object.entries(route.responses)
    .filter(([status]) => Number(status) < 300)
    .map(([, schema]) => objectShape(schema) ?? {});
  return [body === 'none' ? {} : (objectShape(body) ?? {}), ...responses].flatMap(Object.keys);
}

/**
 * A write that hands out or takes over authority: a field above in its body or response, or a
 * secret shown once. Each must declare its delegation rule in the contract.
 */
export function handsOutAuthority(route: AppRoute): boolean {
  if (route.method === 'GET') return false;
  if (ROUTES.some((r) => r.route === route && NOT_AUTHORITY.includes(r.key))) return false;
  if (operationMetadata(route)?.oneTimeSecret) return true;
  return fieldsOf(route).some((field) => AUTHORITY_FIELDS.includes(field));
}

/** What a route hands out, as a failure message names it: its authority fields, a secret. */
export function authorityOf(route: AppRoute): string {
  const fields = fieldsOf(route).filter((f) => AUTHORITY_FIELDS.includes(f));
  return `${fields.join(', ')}${operationMetadata(route)?.oneTimeSecret ? ', a one-time secret' : ''}`;
}

export const WRITE_ROUTES = ROUTES.filter((r) => r.route.method !== 'GET');

/** Whether a schema holds the contract's event schema anywhere inside it. */
export function holdsEvents(schema: unknown, seen = new Set<unknown>()): boolean {
  if (schema === EventSchema) return true;
  if (!schema || typeof schema !== 'object' || seen.has(schema)) return false;
  seen.add(schema);
  const { shape, _def: def } = schema as { shape?: unknown; _def?: Record<string, unknown> };
  const parts: unknown[] = [shape, ...Object.values(def ?? {})];
  if (typeof def?.shape === 'function') parts.push((def.shape as () => unknown)());
  return parts.some((part) =>
    Array.isArray(part)
      ? part.some((item) => holdsEvents(item, seen))
      : part && typeof part === 'object' && !('_def' in part)
        ? Object.values(part).some((value) => holdsEvents(value, seen))
        : holdsEvents(part, seen),
  );
}

/** Routes whose answer carries events (their `data`): each must apply the per-type read rule. */
export const EVENT_ROUTES = ROUTES.filter(
  (r) =>
    r.route.method === 'GET' && holdsEvents((r.route.responses as Record<number, unknown>)[200]),
);
/** The scopes that guard some event type's data (`students:read` for `student.*`, …). */
export const EVENT_DATA_SCOPES = [
  ...new Set<Scope>(Object.values(EVENT_READ_SCOPES).filter((scope) => scope !== null)),
].sort();

/** Every route that returns events, under both prefixes, with each scope withheld in turn. */
export const EVENT_CASES = API_PREFIXES.flatMap((prefix) =>
  EVENT_ROUTES.flatMap((walked) =>
    EVENT_DATA_SCOPES.map((withheld) => ({
      walked,
      prefix,
      withheld,
      label: `${walked.route.method} ${prefix}${walked.route.path.slice('/v1'.length)}`,
    })),
  ),
);

/** Every event anywhere in an answer (a page's `data`, a feed's changes, a record itself). */
export function eventsIn(value: unknown): { id: string; type: string }[] {
  if (Array.isArray(value)) return value.flatMap(eventsIn);
  if (!value || typeof value !== 'object') return [];
  const record = value as Record<string, unknown>;
  const self =
    record.object === 'event' && typeof record.type === 'string'
      ? [{ id: String(record.id), type: record.type }]
      : [];
  return [...self, ...Object.values(record).flatMap(eventsIn)];
}

/** The routes under both path prefixes, each labelled with its method and prefixed path. */
export const prefixed = (routes: WalkedRoute[]) =>
  API_PREFIXES.flatMap((prefix) =>
    routes.map((walked) => ({
      ...walked,
      prefix,
      label: `${walked.route.method} ${prefix}${walked.route.path.slice('/v1'.length)}`,
    })),
  );

export const DELEGATING_ROUTES = ROUTES.filter((r) => operationMetadata(r.route)?.delegation);
export const delegationOf = (route: AppRoute) => operationMetadata(route)?.delegation;

/** An answer as a failure message shows it. */
export function describeResponse(res: WalkResponse): string {
  return `${res.status} ${JSON.stringify(res.body)}`;
}
