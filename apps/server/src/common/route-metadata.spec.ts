import type { ExecutionContext } from '@nestjs/common';
import type { AppRoute } from '@ts-rest/core';
import { TsRestAppRouteMetadataKey } from '@ts-rest/nest';
import type { PlatformRequest } from './http-context';
import { contractRouteFor, contractRouteOf, operationOf } from './route-metadata';

const route = {
  method: 'GET',
  path: '/v1/things',
  responses: {},
  metadata: { scope: 'students:read', requiresUser: false },
} as unknown as AppRoute;

function contextOf(req: Partial<PlatformRequest>, handler: () => void): ExecutionContext {
  return {
    switchToHttp: () => ({ getRequest: () => req }),
    getHandler: () => handler,
  } as unknown as ExecutionContext;
}

describe('contractRouteFor', () => {
  it('looks the route up once per request and answers later asks from the request', () => {
    const handler = () => undefined;
    Reflect.defineMetadata(TsRestAppRouteMetadataKey, { appRoute: route }, handler);
    const req: Partial<PlatformRequest> = {};
    const context = contextOf(req, handler);

    const first = contractRouteFor(context);
    expect(first).toEqual({ route, operation: route.metadata });
    expect(req.contractRoute).toBe(first);
    // Later asks (the interceptors) read the request, not the handler's metadata again.
    Reflect.deleteMetadata(TsRestAppRouteMetadataKey, handler);
    expect(contractRouteOf(context)).toBe(route);
    expect(operationOf(context)).toBe(first?.operation);
  });

  it('keeps null for a route outside the contract', () => {
    const req: Partial<PlatformRequest> = {};
    expect(contractRouteFor(contextOf(req, () => undefined))).toBeNull();
    expect(req.contractRoute).toBeNull();
  });

  it('refuses a contract route that declares no scope', () => {
    const handler = () => undefined;
    Reflect.defineMetadata(
      TsRestAppRouteMetadataKey,
      { appRoute: { ...route, metadata: undefined } },
      handler,
    );
    expect(() => contractRouteFor(contextOf({}, handler))).toThrow('declares no scope');
  });
});
