import type { NestInterceptor, Type } from '@nestjs/common';
import { INTERCEPTORS_METADATA } from '@nestjs/common/constants';
import { listDeprecations } from '@platform/contract';
import { type AppRoute, type AppRouter, isAppRoute } from '@ts-rest/core';
import { TsRestHandler } from '@ts-rest/nest';
import { IdempotencyInterceptor } from '../idempotency/idempotency.interceptor';
import { DeprecationInterceptor } from './deprecation.interceptor';

/** The interceptors a contract route runs before ts-rest's own (request validation). */
export function routeInterceptors(route: AppRoute): Type<NestInterceptor>[] {
  const interceptors: Type<NestInterceptor>[] = [];
  if (listDeprecations({ route }).length > 0) interceptors.push(DeprecationInterceptor);
  if (route.method === 'POST') interceptors.push(IdempotencyInterceptor);
  return interceptors;
}

/**
 * ts-rest's `TsRestHandler`, with each route's own interceptors: `Idempotency-Key` on every POST,
 * the deprecation headers on a route with a deprecated part. Every contract handler is declared
 * with it (ESLint refuses `TsRestHandler` elsewhere in the server).
 *
 * Per route rather than global (`APP_INTERCEPTOR`), because Nest runs each interceptor a route has
 * through an rxjs pipeline and an `AsyncResource` per request (whose `bind` builds two deprecation
 * wrappers each time): with three global interceptors that did nothing on a GET, that was about a
 * tenth of a list request's CPU (bench/README.md, goal 1). A GET now has ts-rest's alone.
 *
 * `TsRestHandler` turns a router's method into one method per route (`<method>_<route key>`),
 * each with its own interceptors; ours go in front of ts-rest's, as the global ones ran: an
 * idempotent POST's claim is rolled back with a request that fails validation.
 */
export function ApiHandler(appRouterOrRoute: AppRouter | AppRoute): MethodDecorator {
  return (target, propertyKey, descriptor) => {
    TsRestHandler(appRouterOrRoute)(target, propertyKey, descriptor);
    const routes: [string | null, AppRoute][] = isAppRoute(appRouterOrRoute)
      ? [[null, appRouterOrRoute]]
      : Object.entries(appRouterOrRoute).flatMap(([key, route]) =>
          isAppRoute(route) ? [[key, route] as [string, AppRoute]] : [],
        );
    for (const [key, route] of routes) {
      const before = routeInterceptors(route);
      if (before.length === 0) continue;
      const method: unknown =
        key === null
          ? descriptor.value
          : (target as Record<string, unknown>)[`${String(propertyKey)}_${key}`];
      if (typeof method !== 'function') {
        throw new Error(`ApiHandler: no method for route ${route.method} ${route.path}`);
      }
      const own = (Reflect.getMetadata(INTERCEPTORS_METADATA, method) ?? []) as unknown[];
      Reflect.defineMetadata(INTERCEPTORS_METADATA, [...before, ...own], method);
    }
    return descriptor;
  };
}
