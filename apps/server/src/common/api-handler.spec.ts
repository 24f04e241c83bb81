/**
 * Which interceptors each contract route runs, read from the real controllers' metadata (what
 * Nest builds each route's pipeline from): Idempotency-Key on every POST, before ts-rest's
 * validation; nothing of ours on the other routes, a list included. The behaviour behind each is
 * proven over HTTP (test/idempotency.e2e-spec.ts, test/deprecation.e2e-spec.ts).
 */
import { globSync } from 'node:fs';
import path from 'node:path';
import { INTERCEPTORS_METADATA } from '@nestjs/common/constants';
import { contract, deprecated } from '@platform/contract';
import { type AppRoute, type AppRouter, initContract, isAppRoute } from '@ts-rest/core';
import { TsRestAppRouteMetadataKey, TsRestHandlerInterceptor } from '@ts-rest/nest';
import { z } from 'zod';
import { IdempotencyInterceptor } from '../idempotency/idempotency.interceptor';
import { ApiHandler } from './api-handler';
import { DeprecationInterceptor } from './deprecation.interceptor';

function routesOf(router: AppRouter): AppRoute[] {
  return Object.values(router).flatMap((entry) => (isAppRoute(entry) ? [entry] : routesOf(entry)));
}

/** Every handler method the server's controllers declare: its route and its interceptors. */
function servedRoutes(): Map<AppRoute, unknown[]> {
  const served = new Map<AppRoute, unknown[]>();
  for (const file of globSync('**/*.controller.ts', { cwd: path.join(__dirname, '..') })) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const exported = require(path.join(__dirname, '..', file)) as Record<string, unknown>;
    for (const value of Object.values(exported)) {
      if (typeof value !== 'function') continue;
      const prototype = (value as { prototype: Record<string, unknown> }).prototype;
      for (const name of Object.getOwnPropertyNames(prototype)) {
        const method = prototype[name];
        if (typeof method !== 'function') continue;
        const meta = Reflect.getMetadata(TsRestAppRouteMetadataKey, method) as
          { appRoute: AppRoute } | undefined;
        if (!meta) continue;
        served.set(
          meta.appRoute,
          (Reflect.getMetadata(INTERCEPTORS_METADATA, method) ?? []) as unknown[],
        );
      }
    }
  }
  return served;
}

describe('ApiHandler', () => {
  const served = servedRoutes();
  const all = routesOf(contract);

  it('serves contract routes through the controllers it decorates', () => {
    const posts = all.filter((route) => route.method === 'POST');
    expect(posts.length).toBeGreaterThan(10);
    // Every POST of the contract is a handler here: none escapes its Idempotency-Key.
    expect(posts.filter((route) => !served.has(route)).map((r) => r.path)).toEqual([]);
  });

  it('puts Idempotency-Key in front of validation on every POST, and nothing of ours elsewhere', () => {
    for (const [route, interceptors] of served) {
      const expected =
        route.method === 'POST'
          ? [IdempotencyInterceptor, TsRestHandlerInterceptor]
          : [TsRestHandlerInterceptor];
      expect({ route: `${route.method} ${route.path}`, interceptors }).toEqual({
        route: `${route.method} ${route.path}`,
        interceptors: expected,
      });
    }
    const list = served.get(contract.students.list);
    expect(list).toEqual([TsRestHandlerInterceptor]);
  });

  it('announces deprecations on a route with a deprecated part, and only there', () => {
    const c = initContract();
    const router = c.router({
      old: {
        method: 'GET',
        path: '/v1/old',
        query: z.object({ colour: deprecated(z.string().optional(), { since: '2026-01-01' }) }),
        responses: { 200: z.object({}) },
      },
      current: { method: 'GET', path: '/v1/current', responses: { 200: z.object({}) } },
      single: {
        method: 'POST',
        path: '/v1/single',
        body: z.object({}),
        responses: { 201: z.object({}) },
      },
    });
    class Handlers {
      handle() {
        return undefined;
      }
      one() {
        return undefined;
      }
    }
    const decorate = (route: AppRouter | AppRoute, key: 'handle' | 'one') =>
      ApiHandler(route)(
        Handlers.prototype,
        key,
        Object.getOwnPropertyDescriptor(Handlers.prototype, key)!,
      );
    decorate({ old: router.old, current: router.current }, 'handle');
    decorate(router.single, 'one');
    const interceptorsOf = (name: string) =>
      Reflect.getMetadata(
        INTERCEPTORS_METADATA,
        (Handlers.prototype as unknown as Record<string, object>)[name]!,
      ) as unknown[];
    expect(interceptorsOf('handle_old')).toEqual([
      DeprecationInterceptor,
      TsRestHandlerInterceptor,
    ]);
    expect(interceptorsOf('handle_current')).toEqual([TsRestHandlerInterceptor]);
    // A single route's decorator keeps the method it decorates.
    expect(interceptorsOf('one')).toEqual([IdempotencyInterceptor, TsRestHandlerInterceptor]);
  });
});
