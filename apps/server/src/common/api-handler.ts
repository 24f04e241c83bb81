import { type NestInterceptor, Req, type Type } from '@nestjs/common';
import { INTERCEPTORS_METADATA, ROUTE_ARGS_METADATA } from '@nestjs/common/constants';
import { listDeprecations } from '@platform/contract';
import { type AppRoute, type AppRouter, checkZodSchema, isAppRoute } from '@ts-rest/core';
import { RequestValidationError, TsRestHandler, TsRestHandlerInterceptor } from '@ts-rest/nest';
import type { Request } from 'express';
import { IdempotencyInterceptor } from '../idempotency/idempotency.interceptor';
import { DeprecationInterceptor } from './deprecation.interceptor';

/** The interceptors a contract route runs before its handler: none on most routes. */
function routeInterceptors(route: AppRoute): Type<NestInterceptor>[] {
  const interceptors: Type<NestInterceptor>[] = [];
  if (listDeprecations({ route }).length > 0) interceptors.push(DeprecationInterceptor);
  if (route.method === 'POST') interceptors.push(IdempotencyInterceptor);
  return interceptors;
}

/** What a route's implementation is given: the request's parts, as its contract parsed them. */
interface RouteInput {
  params: unknown;
  query: unknown;
  body: unknown;
  headers: unknown;
}

type Implementation = Record<
  string,
  (input: RouteInput) => Promise<{ status: number; body: unknown }>
>;

/**
 * The request's parts parsed by the route's schemas, as ts-rest's interceptor parses them (path
 * parameters and headers keep the keys their schema does not name), or ts-rest's
 * `RequestValidationError` (a 400 problem, problem-details.filter.ts) naming each part that failed.
 */
function parseRequest(route: AppRoute, req: Request): RouteInput {
  const params = checkZodSchema(req.params, route.pathParams, { passThroughExtraKeys: true });
  const headers = checkZodSchema(req.headers, route.headers, { passThroughExtraKeys: true });
  // Express builds `req.query` anew on each read: read once.
  const query = checkZodSchema(req.query, route.query);
  const body = checkZodSchema(req.body, 'body' in route ? route.body : null);
  if (!params.success || !headers.success || !query.success || !body.success) {
    throw new RequestValidationError(
      params.success ? null : params.error,
      headers.success ? null : headers.error,
      query.success ? null : query.error,
      body.success ? null : body.error,
    );
  }
  return { params: params.data, query: query.data, body: body.data, headers: headers.data };
}

/**
 * ts-rest's `TsRestHandler` without its interceptor, with each route's own interceptors:
 * `Idempotency-Key` on every POST, the deprecation headers on a route with a deprecated part.
 * Every contract handler is declared with it (ESLint refuses `TsRestHandler` elsewhere in the
 * server).
 *
 * `TsRestHandler` turns a router's method into one method per route (`<method>_<route key>`),
 * each with ts-rest's interceptor, which parses the request by the contract, calls the route's
 * implementation and sets the status it returns. Here each of those methods does that work
 * itself (it is given the request as one more argument), and the interceptor is gone. Nest runs
 * every interceptor a route has through rxjs and two `AsyncResource.bind`s per request, and a
 * route with none calls the handler directly: about a tenth of a list request's CPU for three
 * such layers (bench/README.md, goal 1). A GET now has none; ours stay on the routes that need
 * them, in front of the parsing, as before: an idempotent POST's claim is rolled back when its
 * request fails validation. Responses are not validated, as ts-rest's default.
 */
export function ApiHandler(router: AppRouter): MethodDecorator {
  return (target, propertyKey, descriptor) => {
    TsRestHandler(router)(target, propertyKey, descriptor);
    const methods = target as Record<string, unknown>;
    for (const [key, route] of Object.entries(router)) {
      if (!isAppRoute(route)) continue;
      const name = `${String(propertyKey)}_${key}`;
      const generated = methods[name];
      if (typeof generated !== 'function') {
        throw new Error(`ApiHandler: no method for route ${route.method} ${route.path}`);
      }
      const args = (Reflect.getMetadata(ROUTE_ARGS_METADATA, target.constructor, name) ??
        {}) as Record<string, { index: number }>;
      const requestIndex = Object.values(args).reduce((n, arg) => Math.max(n, arg.index + 1), 0);
      const handle = async function (this: unknown, ...given: unknown[]): Promise<unknown> {
        const req = given[requestIndex] as Request;
        const input = parseRequest(route, req);
        const implementation = (await generated.apply(
          this,
          given.slice(0, requestIndex),
        )) as Implementation;
        const result = await implementation[key]!(input);
        req.res!.status(result.status);
        return result.body;
      };
      // Nest reads a route's path, verb and the rest from its method: the new one keeps them.
      for (const metadataKey of Reflect.getOwnMetadataKeys(generated) as unknown[]) {
        Reflect.defineMetadata(metadataKey, Reflect.getOwnMetadata(metadataKey, generated), handle);
      }
      // Ours first, then any the method declares itself; ts-rest's is gone.
      const declared = (
        (Reflect.getOwnMetadata(INTERCEPTORS_METADATA, generated) ?? []) as unknown[]
      ).filter((interceptor) => interceptor !== TsRestHandlerInterceptor);
      Reflect.defineMetadata(
        INTERCEPTORS_METADATA,
        [...routeInterceptors(route), ...declared],
        handle,
      );
      methods[name] = handle;
      Req()(target, name, requestIndex);
    }
    return descriptor;
  };
}
