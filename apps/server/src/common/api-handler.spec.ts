/**
 * Which interceptors each contract route runs, read from the real controllers' metadata (what
 * Nest builds each route's pipeline from): Idempotency-Key on every POST, in front of the
 * request's validation; no interceptor on the other routes, a list included. Then what a
 * decorated method does with a request. The behaviour behind each is proven over HTTP
 * (test/idempotency.e2e-spec.ts, test/deprecation.e2e-spec.ts, the validation tests).
 */
import { globSync } from 'node:fs';
import path from 'node:path';
import {
  createParamDecorator,
  type ExecutionContext,
  Req,
  RequestMethod,
  UseInterceptors,
} from '@nestjs/common';
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
        headers: z.object({ 'x-scheme': z.enum(['light', 'dark']).optional() }),
        query: z.object({
          colour: deprecated(z.string().optional(), { since: '2026-01-01' }),
          limit: z.coerce.number().optional(),
        }),
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
    /** An interceptor the method declares itself, under ApiHandler. */
    class Declared {}
    class Handlers {
      @ApiHandler(router)
      @UseInterceptors(Declared)
      // An argument without a decorator between: Nest passes it undefined.
      handle(@Given() given: string, _undecorated: unknown, @Req() own: { name: string }) {
        return tsRestHandler(router, {
          old: (input) => {
            implemented.push('old');
            return Promise.resolve({ status: 200 as const, body: { given, own, ...input } });
          },
          current: (input) => {
            implemented.push('current');
            return Promise.resolve({ status: 201 as const, body: { given, own, ...input } });
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
    const request = (parts: {
      params?: object;
      query?: object;
      headers?: object;
      body?: unknown;
    }) => {
      const statuses: number[] = [];
      const req = {
        params: {},
        query: {},
        ...parts,
        headers: { host: 'example.test', ...parts.headers },
        res: { status: (code: number) => statuses.push(code) },
      };
      return { req, statuses };
    };
    /** The error a call is refused with; fails the test if it is not refused. */
    const refusal = async (answer: Promise<unknown>) => {
      try {
        await answer;
      } catch (error) {
        return error as RequestValidationError;
      }
      throw new Error('the request was not refused');
    };
    const own = { name: "the method's own @Req()" };

    it("puts its interceptors in front of those the method declares, without ts-rest's", () => {
      expect(interceptorsOf('handle_old')).toEqual([DeprecationInterceptor, Declared]);
      expect(interceptorsOf('handle_current')).toEqual([IdempotencyInterceptor, Declared]);
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
      const requests = Object.entries(args)
        .filter(([key]) => key.startsWith(`${RouteParamtypes.REQUEST}:`))
        .map(([, arg]) => arg.index);
      expect(requests.sort()).toEqual([2, 3]);
    });

    it('answers with the status and body of the implementation, given the parsed request', async () => {
      const { req, statuses } = request({
        params: { id: '7', unnamed: 'kept' },
        query: { colour: 'red', limit: '5', unnamed: 'dropped' },
        headers: { 'x-scheme': 'dark' },
      });
      const body = await methods['handle_old']!.call(
        new Handlers(),
        'from a decorator',
        undefined,
        own,
        req,
      );
      expect(statuses).toEqual([200]);
      expect(body).toEqual({
        given: 'from a decorator',
        own,
        // Path parameters and headers keep the keys their schema does not name, as in ts-rest;
        // the query and body keep only theirs.
        params: { id: 7, unnamed: 'kept' },
        query: { colour: 'red', limit: 5 },
        body: undefined,
        headers: { host: 'example.test', 'x-scheme': 'dark' },
      });
    });

    it('refuses a request its schemas refuse, naming the part, before the implementation', async () => {
      implemented.length = 0;
      const cases: [string, Parameters<typeof request>[0], keyof RequestValidationError][] = [
        ['handle_current', { body: { name: 3 } }, 'body'],
        ['handle_old', { params: { id: 'seven' } }, 'pathParams'],
        ['handle_old', { params: { id: '7' }, query: { limit: 'many' } }, 'query'],
        ['handle_old', { params: { id: '7' }, headers: { 'x-scheme': 'blue' } }, 'headers'],
      ];
      for (const [name, parts, failed] of cases) {
        const { req, statuses } = request(parts);
        const error = await refusal(methods[name]!.call(new Handlers(), 'x', undefined, own, req));
        expect(error).toBeInstanceOf(RequestValidationError);
        const named = (['pathParams', 'headers', 'query', 'body'] as const).filter(
          (part) => error[part] !== null,
        );
        expect({ name, named }).toEqual({ name, named: [failed] });
        expect(error[failed]).toBeInstanceOf(ZodError);
        expect(statuses).toEqual([]);
      }
      expect(implemented).toEqual([]);
    });
  });
});
