/**
 * The shapes of a resource's routes, written once: each router names its paths, schemas, scope
 * and documentation, and these add the method, the path id, the success status and the error
 * responses that every route of that kind answers with. A list route is flagged for the SDK's
 * `listAll`, and every route carries its scope (see `operation`).
 */
import { type ContractNoBodyType, initContract } from '@ts-rest/core';
import { describeListQuery, listResponse } from './list';
import { type OperationMetadata, operation } from './operation';
import { commonErrorResponses } from './problem';
import {
  type DeleteRefusal,
  deleteRefusalDescription,
  IdPathParams,
  readErrorResponses,
  writeErrorResponses,
} from './resource';
import type { READ_ONLY_SCOPE_RESOURCES, Scope, ScopeResource } from './scopes';
import type { z } from './zod-openapi';

import { BATCH_COST } from './batch';

const c = initContract();

/** What a route says of itself in the documentation, and its metadata besides the scope. */
interface RouteSpec extends Omit<OperationMetadata, 'scope' | 'list'> {
  summary: string;
  description?: string;
  /** The scope a token needs; `null` means any valid token will do. */
  scope: Scope | null;
}

function metadataOf({
  scope,
  oneTimeSecret,
  delegation,
  deprecated,
  requiresUser,
  cost,
}: RouteSpec) {
  return operation({
    scope,
    ...(cost !== undefined && { cost }),
    ...(oneTimeSecret !== undefined && { oneTimeSecret }),
    ...(delegation !== undefined && { delegation }),
    ...(deprecated !== undefined && { deprecated }),
    ...(requiresUser !== undefined && { requiresUser }),
  });
}

/**
 * What every route starts with: its method and path, what the documentation says of it, and
 * its metadata.
 */
function head<const M extends 'GET' | 'POST' | 'PATCH' | 'DELETE', const P extends string>(
  method: M,
  path: P,
  spec: RouteSpec,
) {
  const { summary, description } = spec;
  return { method, path, summary, description, metadata: metadataOf(spec) };
}

/** What every route of one resource (`/:id`, `/:id/<verb>`) starts with: `head` and the id. */
function headOfOne<const M extends 'GET' | 'POST' | 'PATCH' | 'DELETE', const P extends string>(
  method: M,
  path: P,
  spec: RouteSpec,
) {
  return { ...head(method, path, spec), pathParams: IdPathParams };
}

/**
 * What a list route says of itself: a `description` of its own, or else the sentence its query
 * derives (`describeListQuery`: filters, ranges, search), after a `lead` if it has one.
 */
type ListRouteSpec<Q extends z.ZodTypeAny, E extends object> = RouteSpec & {
  lead?: string;
  query: Q;
  errors?: E;
};

function listDescription({ description, lead, query }: ListRouteSpec<z.ZodTypeAny, object>) {
  if (description !== undefined) return description;
  const sentences = [lead, describeListQuery(query)].filter((s) => s !== undefined);
  return sentences.length ? sentences.join(' ') : undefined;
}

/**
 * `GET` of a collection through the list convention (`listResponse` builds `response`). A list
 * under one resource (`/:id/...`) adds `pathParams: IdPathParams` to it.
 */
export function listRoute<
  const P extends string,
  Q extends z.ZodTypeAny,
  R extends z.ZodTypeAny,
  E extends object = typeof commonErrorResponses,
>(path: P, spec: ListRouteSpec<Q, E> & { response: R }) {
  return {
    ...head('GET', path, { ...spec, description: listDescription(spec) }),
    query: spec.query,
    responses: { 200: spec.response, ...((spec.errors ?? commonErrorResponses) as E) },
    metadata: { ...metadataOf(spec), list: true as const },
  };
}

/** A route's spec inside `resourceRoutes`: the path and the scope come from the resource. */
type ResourceRouteSpec = Omit<RouteSpec, 'scope'>;

/** The title an `.openapi({ title })` gave a schema: a resource's list is titled `<title>List`. */
function titleOf(schema: z.ZodTypeAny): string {
  const title = (schema as { metaOpenApi?: { title?: string } }).metaOpenApi?.title;
  if (title === undefined) throw new Error('a resource schema needs .openapi({ title })');
  return title;
}

/**
 * The read routes of one resource: `list` at its collection `path`, `retrieve` at `path/:id`,
 * both needing `<resource>:read`. `schema` is the resource: what `retrieve` answers, and what
 * `list` pages through (`<title>List`); a list is its summary and its query, and `more` is what
 * is particular to it (`errors`, a `lead` or a `description` of its own).
 */
export function readRoutes<const P extends string, T extends z.ZodTypeAny>(
  path: P,
  resource: ScopeResource,
  schema: T,
) {
  const scope = `${resource}:read` as const;
  return {
    list: <Q extends z.ZodTypeAny, E extends object = typeof commonErrorResponses>(
      summary: string,
      query: Q,
      more: Omit<ListRouteSpec<Q, E>, 'scope' | 'summary' | 'query'> = {},
    ) =>
      listRoute(path, {
        ...more,
        summary,
        query,
        response: listResponse(schema, `${titleOf(schema)}List`),
        scope,
      }),
    /** `GET` of one resource by its id. */
    retrieve: (spec: ResourceRouteSpec) => ({
      ...headOfOne('GET', `${path}/:id`, { ...spec, scope }),
      responses: { 200: schema, ...readErrorResponses },
    }),
  };
}

/**
 * `POST` to `path/batch` of up to BATCH_MAX_ITEMS items keyed by `external_id`, each created,
 * updated or left unchanged (`batchSchemas` in batch.ts), at the cost of BATCH_COST.
 */
function batchRoute<const P extends string>(path: P, scope: Scope) {
  return <B extends z.ZodTypeAny, R extends z.ZodTypeAny>(
    spec: ResourceRouteSpec & { body: B; response: R },
  ) => ({
    ...head('POST', `${path}/batch`, { cost: BATCH_COST, ...spec, scope }),
    body: spec.body,
    responses: { 200: spec.response, ...writeErrorResponses },
  });
}

/**
 * The routes of one resource, from its collection `path` (list, create) and `path/:id` (retrieve,
 * update, delete, and `action` for `path/:id/<verb>`): each route names its documentation and
 * schemas, and needs `<resource>:read` (list, retrieve) or `<resource>:write` (the rest). A write
 * answers with the resource's `schema` unless it names another `response`.
 */
export function resourceRoutes<const P extends string, T extends z.ZodTypeAny>(
  path: P,
  resource: Exclude<ScopeResource, (typeof READ_ONLY_SCOPE_RESOURCES)[number]>,
  schema: T,
) {
  const one = `${path}/:id` as const;
  const scope = `${resource}:write` as const;
  // `R` is inferred from `response` when one is given, and defaults to `T` when none is.
  const answer = <R extends z.ZodTypeAny>(response: R | undefined) => (response ?? schema) as R;
  return {
    ...readRoutes(path, resource, schema),
    /** `GET` of figures computed about one resource (`/:id/<noun>`), needing `<resource>:read`. */
    view: <const V extends string, R extends z.ZodTypeAny>(
      noun: V,
      spec: ResourceRouteSpec & { response: R },
    ) => ({
      ...headOfOne('GET', `${one}/${noun}`, { ...spec, scope: `${resource}:read` as const }),
      responses: { 200: spec.response, ...readErrorResponses },
    }),
    batch: batchRoute(path, scope),
    /** `POST` to the collection that creates one resource (201). */
    create: <B extends z.ZodTypeAny, R extends z.ZodTypeAny = T>(
      spec: ResourceRouteSpec & { body: B; response?: R },
    ) => ({
      ...head('POST', path, { ...spec, scope }),
      body: spec.body,
      responses: { 201: answer(spec.response), ...writeErrorResponses },
    }),
    /** `PATCH` of one resource: only the fields sent change. */
    update: <B extends z.ZodTypeAny, R extends z.ZodTypeAny = T>(
      spec: ResourceRouteSpec & { body: B; response?: R },
    ) => ({
      ...headOfOne('PATCH', one, { ...spec, scope }),
      body: spec.body,
      responses: { 200: answer(spec.response), ...writeErrorResponses },
    }),
    /**
     * `DELETE` of one resource (no body); `response` is what is left of it (200). A `refusal`
     * (records that refer to it block the delete) is its description.
     */
    delete: <R extends z.ZodTypeAny = T>(
      spec: ResourceRouteSpec & { response?: R; refusal?: DeleteRefusal },
    ) => ({
      ...headOfOne('DELETE', one, {
        ...spec,
        ...(spec.refusal && { description: deleteRefusalDescription(spec.refusal) }),
        scope,
      }),
      body: c.noBody(),
      responses: { 200: answer(spec.response), ...writeErrorResponses },
    }),
    /**
     * `POST` of an action on one resource (`/:id/<verb>`): a state transition, a rotation, a
     * test. No body unless one is given; 200 unless the action only queues work (202).
     */
    action: <
      const V extends string,
      R extends z.ZodTypeAny = T,
      B extends z.ZodTypeAny | ContractNoBodyType = ContractNoBodyType,
      const S extends 200 | 202 = 200,
    >(
      verb: V,
      spec: ResourceRouteSpec & { response?: R; body?: B; status?: S },
    ) => ({
      ...headOfOne('POST', `${one}/${verb}`, { ...spec, scope }),
      body: (spec.body ?? c.noBody()) as B,
      responses: { [spec.status ?? 200]: answer(spec.response), ...writeErrorResponses } as {
        [K in S]: R;
      } & typeof writeErrorResponses,
    }),
  };
}
