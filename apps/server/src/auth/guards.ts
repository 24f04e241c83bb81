import { type ExecutionContext, Injectable, type CanActivate } from '@nestjs/common';
import { asPlatformRequest } from '../common/http-context';
import { ProblemException } from '../common/problem.exception';
import { BearerStrategy } from './bearer.strategy';
import { contractRouteOf, operationOf } from './route-metadata';

const FAILURE_DETAIL: Record<string, string> = {
  missing: 'Send a token in the Authorization header: Authorization: Bearer <token>',
  malformed: 'The bearer token is malformed',
  unknown: 'The bearer token is not recognised',
  expired: 'The bearer token has expired',
  revoked: 'The bearer token has been revoked',
};

/**
 * Step 1 of 3 (auth → rate limit → scope). Resolves the bearer token but never rejects, so
 * that requests failing authentication still count against their IP's rate limit before the
 * scope guard answers 401. The front door has usually resolved it already (before reading the
 * body); the token is looked up once per request either way.
 */
@Injectable()
export class BearerAuthGuard implements CanActivate {
  constructor(private readonly bearer: BearerStrategy) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (!contractRouteOf(context)) return true;
    await this.bearer.resolve(asPlatformRequest(context.switchToHttp().getRequest()));
    return true;
  }
}

/** Step 3 of 3: 401 without a valid token, 403 `insufficient_scope` without the route's scope. */
@Injectable()
export class ScopeGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const operation = operationOf(context);
    if (!operation) return true;
    const req = asPlatformRequest(context.switchToHttp().getRequest());
    const principal = req.principal;
    if (!principal) {
      const reason = req.authFailure ?? 'missing';
      throw new ProblemException(
        'unauthorized',
        FAILURE_DETAIL[reason] ?? FAILURE_DETAIL.malformed!,
        {
          headers: {
            'WWW-Authenticate': `Bearer realm="platform", error="invalid_token", error_description="${FAILURE_DETAIL[reason] ?? 'invalid token'}"`,
          },
        },
      );
    }
    if (operation.requiresUser && !principal.userId) {
      throw new ProblemException(
        'forbidden',
        'This operation is about the calling member, and this token acts for no member (client credentials, or a token an operator made). Use an OAuth token a member approved, or a personal access token a member made.',
      );
    }
    if (operation.scope !== null && !principal.scopes.has(operation.scope)) {
      const held = [...principal.scopes].join(', ') || 'none';
      throw new ProblemException(
        'insufficient_scope',
        `This operation requires the '${operation.scope}' scope; the token has: ${held}`,
        {
          headers: {
            'WWW-Authenticate': `Bearer realm="platform", error="insufficient_scope", scope="${operation.scope}"`,
          },
        },
      );
    }
    return true;
  }
}
