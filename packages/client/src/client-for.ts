/**
 * A client for any ts-rest router, typed from it: how the SDK's own tests exercise transport,
 * retries and deprecation against small test contracts. Not part of the published entry points
 * (it would tie the SDK's types to ts-rest); `createClient` runs on the generated route table.
 */
import { operationMetadata } from '@platform/contract';
import {
  type AppRoute,
  type AppRouter,
  type ClientInferResponses,
  type ContractNoBodyType,
  isAppRoute,
  type PartialClientInferRequest,
  type SuccessfulHttpStatusCode,
} from '@ts-rest/core';
import type { PlatformPromise } from './api-promise';
import { buildClient, type ClientOptions } from './client';
import type { RequestOptions, RouteSpec, RouteTable } from './route-types';

type RequestArgs<R extends AppRoute> = PartialClientInferRequest<R>;
type SuccessBody<R extends AppRoute> = NoBodyAsUndefined<
  Extract<ClientInferResponses<R>, { status: SuccessfulHttpStatusCode }>['body']
>;
type NoBodyAsUndefined<B> = B extends ContractNoBodyType ? undefined : B;
type QueryInput<R extends AppRoute> = RequestArgs<R> extends { query?: infer Q } ? Q : never;
type ListItem<R extends AppRoute> =
  SuccessBody<R> extends { data: readonly (infer I)[] } ? I : never;
type HasRequired<T> = Record<never, never> extends T ? false : true;
type QueryOnly<R extends AppRoute> = 'params' extends keyof RequestArgs<R>
  ? false
  : 'body' extends keyof RequestArgs<R>
    ? false
    : 'query' extends keyof RequestArgs<R>
      ? true
      : false;
type Result<R extends AppRoute> = PlatformPromise<SuccessBody<R>>;
type RouteMethod<R extends AppRoute> =
  QueryOnly<R> extends true
    ? {
        (query?: QueryInput<R>, options?: RequestOptions): Result<R>;
        (args: RequestArgs<R>, options?: RequestOptions): Result<R>;
      }
    : HasRequired<RequestArgs<R>> extends true
      ? (args: RequestArgs<R>, options?: RequestOptions) => Result<R>
      : (args?: RequestArgs<R>, options?: RequestOptions) => Result<R>;
type IsListRoute<R extends AppRoute> = R['metadata'] extends infer M
  ? M extends object
    ? 'list' extends keyof M
      ? M['list' & keyof M] extends true
        ? true
        : false
      : false
    : false
  : false;

/** The client surface of a one-level router (`{ things: { list, get } }`). */
export type ClientFor<T extends AppRouter> = {
  [N in keyof T]: T[N] extends AppRouter
    ? { [K in keyof T[N]]: T[N][K] extends AppRoute ? RouteMethod<T[N][K]> : never } & {
        [
          K in keyof T[N] as T[N][K] extends AppRoute
            ? IsListRoute<T[N][K]> extends true
              ? `${K & string}All`
              : never
            : never
        ]: T[N][K] extends AppRoute
          ? QueryOnly<T[N][K]> extends true
            ? (query?: QueryInput<T[N][K]>) => AsyncIterableIterator<ListItem<T[N][K]>>
            : (args: RequestArgs<T[N][K]>) => AsyncIterableIterator<ListItem<T[N][K]>>
          : never;
      }
    : never;
};

export function createClientFor<T extends AppRouter>(
  router: T,
  options: ClientOptions,
): ClientFor<T> {
  return buildClient(routeTableOf(router), options) as unknown as ClientFor<T>;
}

/** The route table of a ts-rest router: what the generator writes for the real contract. */
export function routeTableOf(router: AppRouter): RouteTable {
  const table: Record<string, Record<string, RouteSpec>> = {};
  for (const [namespace, routes] of Object.entries(router)) {
    if (isAppRoute(routes)) throw new Error(`'${namespace}' must be a router of routes`);
    table[namespace] = {};
    for (const [key, route] of Object.entries(routes)) {
      if (!isAppRoute(route)) throw new Error(`'${namespace}.${key}' must be a route`);
      const hasQuery = route.query !== undefined && route.query !== null;
      table[namespace][key] = {
        method: route.method,
        path: route.path,
        ...(hasQuery && { query: queryKeysOf(route.query) }),
        ...('body' in route && { body: true }),
        ...(operationMetadata(route)?.list && { list: true }),
      };
    }
  }
  return table;
}

/** The keys of a zod object query (possibly inside effects); `true` when they cannot be read. */
function queryKeysOf(schema: unknown): readonly string[] | true {
  for (let depth = 0; depth < 5 && typeof schema === 'object' && schema !== null; depth++) {
    const candidate = schema as {
      shape?: unknown;
      _def?: { schema?: unknown; innerType?: unknown };
    };
    if (typeof candidate.shape === 'object' && candidate.shape !== null)
      return Object.keys(candidate.shape);
    schema = candidate._def?.schema ?? candidate._def?.innerType;
  }
  return true;
}
