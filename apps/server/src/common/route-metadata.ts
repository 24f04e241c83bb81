import type { ExecutionContext } from '@nestjs/common';
import { type OperationMetadata, operationMetadata } from '@platform/contract';
import type { AppRoute } from '@ts-rest/core';
import { TsRestAppRouteMetadataKey } from '@ts-rest/nest';
import { asPlatformRequest, type ContractRoute } from './http-context';

/**
 * The contract route the request's handler implements, with its operation metadata (scope,
 * member-only), or null for routes outside the contract (health, docs, metrics). Looked up once
 * per request, by the first guard or interceptor that asks, and kept on the request.
 */
export function contractRouteFor(context: ExecutionContext): ContractRoute | null {
  const req = asPlatformRequest(context.switchToHttp().getRequest());
  if (req.contractRoute === undefined) req.contractRoute = lookUp(context);
  return req.contractRoute;
}

function lookUp(context: ExecutionContext): ContractRoute | null {
  const entry = Reflect.getMetadata(TsRestAppRouteMetadataKey, context.getHandler()) as
    { appRoute: AppRoute } | undefined;
  if (!entry) return null;
  const route = entry.appRoute;
  const operation = operationMetadata(route);
  // Every contract route must name its scope; refuse to serve one that does not.
  if (!operation) throw new Error(`contract route ${route.method} ${route.path} declares no scope`);
  return { route, operation };
}

/** The contract route a handler implements, or undefined for non-API routes (health, docs). */
export function contractRouteOf(context: ExecutionContext): AppRoute | undefined {
  return contractRouteFor(context)?.route;
}

export function operationOf(context: ExecutionContext): OperationMetadata | undefined {
  return contractRouteFor(context)?.operation;
}
