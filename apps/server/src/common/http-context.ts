import type { OperationMetadata } from '@platform/contract';
import type { AppRoute } from '@ts-rest/core';
import type { Request } from 'express';
import type { AuthenticationResult, Principal } from './principal';

/** The contract route a request is for, and what the contract says of its operation. */
export interface ContractRoute {
  route: AppRoute;
  operation: OperationMetadata;
}

/** What our middleware and guards attach to the Express request. */
export interface PlatformRequest extends Request {
  id: string;
  /** The authenticated caller (set with a successful `authentication`). */
  principal?: Principal;
  /** The bearer token's outcome, resolved once per request (see BearerStrategy.authenticate). */
  authentication?: AuthenticationResult;
  /** The handler's contract route, looked up once per request (null: not an API route). */
  contractRoute?: ContractRoute | null;
  /** The front door already charged this request to a per-IP or per-client budget. */
  rateLimitCharged?: boolean;
  /** The organization's budget after this request was charged, as the rate-limit headers say. */
  rateLimit?: { limit: number; remaining: number; resetAtMs: number };
  /** `PUBLIC_URL` when configured: the origin pagination links are built on. */
  publicOrigin?: string;
  /** The problem `code` of the error response, once one is sent (for the request log). */
  problemCode?: string;
  /**
   * The caller's access checked again, as at the start of the request (401/403 when it is gone):
   * set on long-lived requests (the change feed's `wait`), which call it each time they wake.
   */
  recheckAccess?: () => Promise<Principal>;
  /** The route pattern, for handlers outside Express routing (the OAuth server). */
  routePattern?: string;
}

/** The origin the caller reached: `PUBLIC_URL` when configured, else scheme and Host. */
export function requestOrigin(req: PlatformRequest): string {
  return req.publicOrigin ?? `${req.protocol}://${req.get('host') ?? 'localhost'}`;
}

export function asPlatformRequest(req: Request): PlatformRequest {
  return req as PlatformRequest;
}
