import type { ExecutionContext } from '@nestjs/common';
import { type OperationMetadata, operationMetadata } from '@platform/contract';
import type { AppRoute } from '@ts-rest/core';
import { TsRestAppRouteMetadataKey } from '@ts-rest/nest';

/** The contract route a handler implements, or undefined for non-API routes (health, docs). */
export function contractRouteOf(context: ExecutionContext): AppRoute | undefined {
  const entry = Reflect.getMetadata(TsRestAppRouteMetadataKey, context.getHandler()) as
    { appRoute: AppRoute } | undefined;
  return entry?.appRoute;
}

export function operationOf(context: ExecutionContext): OperationMetadata | undefined {
  const route = contractRouteOf(context);
  if (!route) return undefined;
  const metadata = operationMetadata(route);
  // Every contract route must name its scope; refuse to serve one that does not.
  if (!metadata) throw new Error(`contract route ${route.method} ${route.path} declares no scope`);
  return metadata;
}
