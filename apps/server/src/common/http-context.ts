import type { Request } from 'express';
import type { Principal } from '../auth/principal';

/** What our middleware and guards attach to the Express request. */
export interface PlatformRequest extends Request {
  id: string;
  principal?: Principal;
  /** Why bearer authentication failed, reported by the scope guard as a 401. */
  authFailure?: string;
  /** The bearer token was resolved (principal or authFailure set); it is resolved once per request. */
  authResolved?: boolean;
  /** The front door already charged this request to a per-IP or per-client budget. */
  rateLimitCharged?: boolean;
  /** The organization's budget after this request was charged, as the rate-limit headers say. */
  rateLimit?: { limit: number; remaining: number; resetAtMs: number };
  /** `PUBLIC_URL` when configured: the origin pagination links are built on. */
  publicOrigin?: string;
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
