/**
 * The shapes of a resource's routes, written once: each router names its paths, schemas, scope
 * and documentation, and these add the method, the path id, the success status and the error
 * responses that every route of that kind answers with. A list route is flagged for the SDK's
 * `listAll`, and every route carries its scope (see `operation`).
 */
import { type ContractNoBodyType, initContract } from '@ts-rest/core';
import { type OperationMetadata, operation } from './operation';
import { commonErrorResponses } from './problem';
import { IdPathParams, readErrorResponses, writeErrorResponses } from './resource';
import type { Scope } from './scopes';
import type { z } from './zod-openapi';

const c = initContract();

/** What a route says of itself in the documentation, and its metadata besides the scope. */
interface RouteSpec extends Omit<OperationMetadata, 'scope' | 'list'> {
  summary: string;
  description?: string;
  /** The scope a token needs; `null` means any valid token will do. */
  scope: Scope | null;
}

function metadataOf({ scope, oneTimeSecret, delegation, deprecated, requiresUser }: RouteSpec) {
  return operation({
    scope,
    ...(oneTimeSecret !== undefined && { oneTimeSecret }),
    ...(delegation !== undefined && { delegation }),
    ...(deprecated !== undefined && { deprecated }),
    ...(requiresUser !== undefined && { requiresUser }),
  });
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
>(path: P, spec: RouteSpec & { query: Q; response: R; errors?: E }) {
  return {
    method: 'GET' as const,
    path,
    summary: spec.summary,
    description: spec.description,
    query: spec.query,
    responses: { 200: spec.response, ...((spec.errors ?? commonErrorResponses) as E) },
    metadata: { ...metadataOf(spec), list: true as const },
  };
}

/** `POST` to a collection that creates one resource (201). */
export function createRoute<const P extends string, B extends z.ZodTypeAny, R extends z.ZodTypeAny>(
  path: P,
  spec: RouteSpec & { body: B; response: R },
) {
  return {
    method: 'POST' as const,
    path,
    summary: spec.summary,
    description: spec.description,
    body: spec.body,
    responses: { 201: spec.response, ...writeErrorResponses },
    metadata: metadataOf(spec),
  };
}

/** `GET` of one resource by its id. */
export function retrieveRoute<const P extends `${string}/:id`, R extends z.ZodTypeAny>(
  path: P,
  spec: RouteSpec & { response: R },
) {
  return {
    method: 'GET' as const,
    path,
    summary: spec.summary,
    description: spec.description,
    pathParams: IdPathParams,
    responses: { 200: spec.response, ...readErrorResponses },
    metadata: metadataOf(spec),
  };
}

/** `PATCH` of one resource: only the fields sent change. */
export function updateRoute<
  const P extends `${string}/:id`,
  B extends z.ZodTypeAny,
  R extends z.ZodTypeAny,
>(path: P, spec: RouteSpec & { body: B; response: R }) {
  return {
    method: 'PATCH' as const,
    path,
    summary: spec.summary,
    description: spec.description,
    pathParams: IdPathParams,
    body: spec.body,
    responses: { 200: spec.response, ...writeErrorResponses },
    metadata: metadataOf(spec),
  };
}

/** `DELETE` of one resource (no body); `response` is what is left of it (200). */
export function deleteRoute<const P extends `${string}/:id`, R extends z.ZodTypeAny>(
  path: P,
  spec: RouteSpec & { response: R },
) {
  return {
    method: 'DELETE' as const,
    path,
    summary: spec.summary,
    description: spec.description,
    pathParams: IdPathParams,
    body: c.noBody(),
    responses: { 200: spec.response, ...writeErrorResponses },
    metadata: metadataOf(spec),
  };
}

/**
 * `POST` of an action on one resource (`/:id/<verb>`): a state transition, a rotation, a test.
 * No body unless one is given; 200 unless the action only queues work (202).
 */
export function actionRoute<
  const P extends `${string}/:id/${string}`,
  R extends z.ZodTypeAny,
  B extends z.ZodTypeAny | ContractNoBodyType = ContractNoBodyType,
  const S extends 200 | 202 = 200,
>(path: P, spec: RouteSpec & { response: R; body?: B; status?: S }) {
  const status = (spec.status ?? 200) as S;
  return {
    method: 'POST' as const,
    path,
    summary: spec.summary,
    description: spec.description,
    pathParams: IdPathParams,
    body: (spec.body ?? c.noBody()) as B,
    responses: { [status]: spec.response, ...writeErrorResponses } as {
      [K in S]: R;
    } & typeof writeErrorResponses,
    metadata: metadataOf(spec),
  };
}
