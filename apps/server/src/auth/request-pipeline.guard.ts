import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import { DEFAULT_OPERATION_COST, type OperationMetadata, operationCost } from '@platform/contract';
import { type AppRoute, isZodType } from '@ts-rest/core';
import { asPlatformRequest, type PlatformRequest } from '../common/http-context';
import { parseAhead } from '../common/parse-once';
import { ProblemException } from '../common/problem.exception';
import { OrganizationThrottlerGuard } from '../rate-limit/organization-throttler.guard';
import { BearerStrategy } from './bearer.strategy';
import { contractRouteFor } from '../common/route-metadata';
import type { AuthenticationFailure, Principal } from '../common/principal';

const FAILURE_DETAIL: Record<AuthenticationFailure, string> = {
  missing: 'Send a token in the Authorization header: Authorization: Bearer <token>',
  malformed: 'The bearer token is malformed',
  unknown: 'The bearer token is not recognised',
  expired: 'The bearer token has expired',
  revoked: 'The bearer token has been revoked',
};

/**
 * The request pipeline of every API route: the one guard the app registers, so the order is
 * the order of the lines in `canActivate`.
 *
 * 1. Route: the contract route the handler implements, looked up once and kept on the request
 *    (the interceptors read it from there). Routes outside the contract (health, docs) pass.
 * 2. Authenticate (passport bearer strategy): the token → the caller's principal. A failure is
 *    not answered yet, so that it is charged to the caller's rate limit first.
 * 3. Rate limit (@nestjs/throttler): an authenticated caller's organization budget; anyone else's
 *    client IP budget. It comes after authentication because the budget depends on who calls,
 *    and before the 401 so that guessing tokens costs budget like any anonymous request.
 * 4. Scope: 401 without a valid token; 403 on a member-only operation for a token acting for no
 *    member; 403 `insufficient_scope` without the operation's scope.
 *
 * Before any of this, the front door (rate-limit/front-door.ts) has usually authenticated the
 * request and charged an anonymous one to its IP, before its body was read; steps 2 and 3 then
 * reuse that answer rather than look the token up or charge the IP twice.
 */
@Injectable()
export class RequestPipelineGuard implements CanActivate {
  constructor(
    private readonly bearer: BearerStrategy,
    private readonly rateLimit: OrganizationThrottlerGuard,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const contract = contractRouteFor(context);
    if (!contract) return true;
    const req = asPlatformRequest(context.switchToHttp().getRequest());
    const authentication = await this.bearer.authenticate(req);
    // Decided before the charge: a request refused before it runs costs one unit, not its
    // operation's cost (docs/decisions/0019).
    const refusal = authentication.ok
      ? refusalFor(authentication.principal, contract.operation)
      : unauthorized(authentication.reason);
    const invalid = !refusal && failsValidation(contract.route, contract.operation, req);
    await this.rateLimit.admit(context, refusal !== undefined || invalid);
    if (refusal) throw refusal;
    const { operation } = contract;
    // A waiting read checks its access again each time it wakes, as a new request would.
    if (operation.feed) req.recheckAccess = () => this.recheck(req, operation);
    return true;
  }

  /** Authentication and the scope check again (not the rate limit): the principal, or 401/403. */
  private async recheck(req: PlatformRequest, operation: OperationMetadata): Promise<Principal> {
    const authentication = await this.bearer.reauthenticate(req);
    if (!authentication.ok) throw unauthorized(authentication.reason);
    assertAllowed(authentication.principal, operation);
    return authentication.principal;
  }
}

function unauthorized(reason: AuthenticationFailure): ProblemException {
  const detail = FAILURE_DETAIL[reason];
  return new ProblemException('unauthorized', detail, {
    headers: {
      'WWW-Authenticate': `Bearer realm="platform", error="invalid_token", error_description="${detail}"`,
    },
  });
}

/**
 * Whether a request of an operation that costs more than one unit will fail validation: checked
 * with the contract's own schemas, only for those (any other costs one unit anyway). It only
 * decides the charge; the handler's validation still answers the 400, from the result kept here
 * (`parseAhead`) rather than parsing the body again.
 */
function failsValidation(
  route: AppRoute,
  operation: OperationMetadata,
  req: { params?: unknown; query?: unknown; body?: unknown },
): boolean {
  if (operationCost(operation) === DEFAULT_OPERATION_COST) return false;
  const fails = (schema: unknown, value: unknown) =>
    isZodType(schema) && !schema.safeParse(value).success;
  const body = 'body' in route ? route.body : undefined;
  return (
    fails(route.pathParams, req.params ?? {}) ||
    fails(route.query, req.query ?? {}) ||
    // The body's result is kept for the handler's parse of the same object (a batch: ~5 ms).
    (isZodType(body) && !parseAhead(body, req.body ?? {}).success)
  );
}

function refusalFor(
  principal: Principal,
  operation: OperationMetadata,
): ProblemException | undefined {
  try {
    assertAllowed(principal, operation);
    return undefined;
  } catch (error) {
    if (error instanceof ProblemException) return error;
    throw error;
  }
}

function assertAllowed(principal: Principal, operation: OperationMetadata): void {
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
}
