/**
 * Which interceptors each contract route runs, read from the real controllers' metadata (what
 * Nest builds each route's pipeline from): Idempotency-Key on every POST, in front of the
 * request's validation; no interceptor on the other routes, a list included. Then what a
 * decorated method does with a request. The behaviour behind each is proven over HTTP
 * (test/idempotency.e2e-spec.ts, test/deprecation.e2e-spec.ts, the validation tests).
 */
import { globSync } from 'node:fs';
import path from 'node:path';
import { createParamDecorator, type ExecutionContext, RequestMethod } from '@nestjs/common';
import {
  INTERCEPTORS_METADATA,
  METHOD_METADATA,
  PATH_METADATA,
  ROUTE_ARGS_METADATA,
} from '@nestjs/common/constants';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum';
import { contract, deprecated } from '@platform/contract';
import { type AppRoute, type AppRouter, initContract, isAppRoute } from '@ts-rest/core';
import { RequestValidationError, TsRestAppRouteMetadataKey, tsRestHandler } from '@ts-rest/nest';
import { z, ZodError } from 'zod';
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

  it('puts Idempotency-Key on every POST, and no interceptor on the other routes', () => {
    for (const [route, interceptors] of served) {
      const expected = route.method === 'POST' ? [IdempotencyInterceptor] : [];
      expect({ route: `${route.method} ${route.path}`, interceptors }).toEqual({
        route: `${route.method} ${route.path}`,
        interceptors: expected,
      });
    }
    // A list request goes from the guards to its handler with no interceptor between.
    expect(served.get(contract.students.list)).toEqual([]);
  });

  describe('a decorated router', () => {
    const c = initContract();
    const router = c.router({
      old: {
        method: 'GET',
        path: '/v1/old/:id',
        pathParams: z.object({ id: z.coerce.number() }),
        query: z.object({ colour: deprecated(z.string().optional(), { since: '2026-01-01' }) }),
        responses: { 200: z.object({}) },
      },
      current: {
        method: 'POST',
        path: '/v1/current',
        body: z.object({ name: z.string() }),
        responses: { 201: z.object({}) },
      },
    });
    const implemented: string[] = [];
    const Given = createParamDecorator((_data: unknown, context: ExecutionContext) => {
      return context.switchToHttp().getRequest<{ given: string }>().given;
    });
    class Handlers {
      @ApiHandler(router)
      handle(@Given() given: string) {
        return tsRestHandler(router, {
          old: (input) => {
            implemented.push('old');
            return Promise.resolve({ status: 200 as const, body: { given, ...input } });
          },
          current: (input) => {
            implemented.push('current');
            return Promise.resolve({ status: 201 as const, body: { given, ...input } });
          },
        });
      }
    }
    const methods = Handlers.prototype as unknown as Record<
      string,
      (...args: unknown[]) => Promise<unknown>
    >;
    const interceptorsOf = (name: string) =>
      Reflect.getMetadata(INTERCEPTORS_METADATA, methods[name]!) as unknown[];
    /** A request as Express gives it to a handler; its answer's status lands in `statuses`. */
    const request = (parts: { params?: object; query?: object; body?: unknown }) => {
      const statuses: number[] = [];
      const req = {
        params: {},
        query: {},
        headers: { host: 'example.test' },
        ...parts,
        res: { status: (code: number) => statuses.push(code) },
      };
      return { req, statuses };
    };

    it('announces deprecations on a route with a deprecated part, and only there', () => {
      expect(interceptorsOf('handle_old')).toEqual([DeprecationInterceptor]);
      expect(interceptorsOf('handle_current')).toEqual([IdempotencyInterceptor]);
    });

    it("keeps the route, and takes the request after the method's own arguments", () => {
      const method = methods['handle_old']!;
      expect(Reflect.getMetadata(PATH_METADATA, method)).toBe('/v1/old/:id');
      expect(Reflect.getMetadata(METHOD_METADATA, method)).toBe(RequestMethod.GET);
      expect(Reflect.getMetadata(TsRestAppRouteMetadataKey, method)).toEqual({
        appRoute: router.old,
        routeKey: 'old',
      });
      const args = Reflect.getMetadata(ROUTE_ARGS_METADATA, Handlers, 'handle_old') as Record<
        string,
        { index: number }
      >;
      expect(Object.entries(args).map(([key, arg]) => [key.split(':')[0], arg.index])).toEqual(
        expect.arrayContaining([[`${RouteParamtypes.REQUEST}`, 1]]),
      );
    });

    it('answers with the status and body of the implementation, given the parsed request', async () => {
      const { req, statuses } = request({
        params: { id: '7', unnamed: 'kept' },
        query: { colour: 'red' },
      });
      const body = await methods['handle_old']!.call(new Handlers(), 'from a decorator', req);
      expect(statuses).toEqual([200]);
      expect(body).toEqual({
        given: 'from a decorator',
        // Path parameters and headers keep the keys their schema does not name, as in ts-rest.
        params: { id: 7, unnamed: 'kept' },
        query: { colour: 'red' },
        body: undefined,
        headers: { host: 'example.test' },
      });
    });

    it('refuses a request its schemas refuse, naming each part, before the implementation', async () => {
      implemented.length = 0;
      const { req, statuses } = request({ params: { id: 'seven' }, body: { name: 3 } });
      const answer = methods['handle_current']!.call(new Handlers(), 'x', {
        ...req,
        params: {},
      });
      await expect(answer).rejects.toBeInstanceOf(RequestValidationError);
      await answer.catch((error: RequestValidationError) => {
        expect(error.body).toBeInstanceOf(ZodError);
        expect(error.pathParams).toBeNull();
        expect(error.query).toBeNull();
      });
      const wrongId = methods['handle_old']!.call(new Handlers(), 'x', req);
      await wrongId.catch((error: RequestValidationError) => {
        expect(error.pathParams).toBeInstanceOf(ZodError);
        expect(error.body).toBeNull();
      });
      expect(statuses).toEqual([]);
      expect(implemented).toEqual([]);
    });
  });
});
