import { type ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import {
  InjectThrottlerOptions,
  InjectThrottlerStorage,
  ThrottlerGuard,
  type ThrottlerModuleOptions,
} from '@nestjs/throttler';
import { DEFAULT_OPERATION_COST, operationCost } from '@platform/contract';
import type { Response } from 'express';
import ipaddr from 'ipaddr.js';
import { asPlatformRequest, type PlatformRequest } from '../common/http-context';
import type { ProblemAnswer } from '../common/problem-details.filter';
import { ProblemException } from '../common/problem.exception';
import type { Principal } from '../common/principal';
import { contractRouteFor } from '../common/route-metadata';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/env';
import { Metrics } from '../metrics/metrics';
import { isPortalClient } from '../oauth/portal-client';
import type { SlidingWindowRecord, SlidingWindowStorage } from './sliding-window.store';

/** One budget, as the door and the guard charge it. */
export interface Budget {
  key: string;
  limit: number;
  /** The `RateLimit-Policy` name. */
  policy: string;
  /** The `budget` label of `rate_limit_rejections_total`. */
  metric: 'organization' | 'anonymous' | 'oauth' | 'oauth_client' | 'portal' | 'admin_reserve';
}

/**
 * What an admin may do on a reserve of its own once the organization's budget is spent: revoke a
 * credential, change or remove a member (docs/decisions/0019), so an abusive token can always be
 * stopped from the portal or the API.
 */
const ADMIN_RESERVE_OPERATIONS = new Set([
  'DELETE /v1/personal_access_tokens/:id',
  'DELETE /v1/oauth_clients/:id',
  'PATCH /v1/members/:id',
  'DELETE /v1/members/:id',
]);
/** Units per window of the admin reserve, per organization. */
export const ADMIN_RESERVE_PER_WINDOW = 60;

/**
 * Takes a request's cost (whole units, 1 unless its operation declares more) from a budget, in one
 * atomic step of the store. Unreachable shared store (Redis): a 503 problem, failing closed rather
 * than serving unlimited.
 */
export async function charge(
  storage: SlidingWindowStorage,
  budget: Budget,
  windowMs: number,
  cost = DEFAULT_OPERATION_COST,
): Promise<SlidingWindowRecord> {
  try {
    return await storage.increment(budget.key, windowMs, budget.limit, 0, budget.policy, cost);
  } catch {
    throw new ProblemException(
      'service_unavailable',
      'Rate limiting is temporarily unavailable, so the request was not served; retry shortly',
      { headers: { 'Retry-After': '1' } },
    );
  }
}

/**
 * The GitHub-style `X-RateLimit-*` headers and the IETF draft `RateLimit` / `RateLimit-Policy`;
 * returns the 429 problem to answer with when the budget is spent.
 */
export function applyRecord(
  res: Response,
  budget: Budget,
  record: SlidingWindowRecord,
  windowMs: number,
  cost = DEFAULT_OPERATION_COST,
): ProblemAnswer | undefined {
  // The throttler's time base (its records' resetAtMs come from it), not the injected Clock.
  const now = Date.now();
  const resetEpoch = Math.ceil(record.resetAtMs / 1000);
  const resetIn = Math.max(0, Math.ceil((record.resetAtMs - now) / 1000));
  const windowSeconds = windowMs / 1000;
  res.setHeader('X-RateLimit-Limit', String(budget.limit));
  res.setHeader('X-RateLimit-Remaining', String(record.remaining));
  res.setHeader('X-RateLimit-Reset', String(resetEpoch));
  res.setHeader('RateLimit-Policy', `"${budget.policy}";q=${budget.limit};w=${windowSeconds}`);
  res.setHeader('RateLimit', `"${budget.policy}";r=${record.remaining};t=${resetIn}`);
  if (!record.isBlocked) return undefined;
  const wait = record.timeToBlockExpire;
  return {
    code: 'rate_limited',
    detail:
      cost === DEFAULT_OPERATION_COST
        ? `Rate limit of ${budget.limit} requests per ${windowSeconds} seconds exceeded; retry in ${wait} s`
        : `Rate limit of ${budget.limit} units per ${windowSeconds} seconds exceeded: this operation costs ${costPhrase(cost, record.cost)}; ${record.remaining} remain; retry in ${wait} s`,
    headers: { 'Retry-After': String(wait) },
  };
}

function costPhrase(declared: number, charged: number): string {
  return charged === declared
    ? `${declared} units`
    : `${declared} units, charged as ${charged} (the whole limit)`;
}

/**
 * The rate-limit step of the request pipeline (auth/request-pipeline.guard.ts), run only on API
 * routes, after authentication. One budget per organization across all its tokens and routes;
 * requests without a valid token are limited per client IP (normally already by the front door,
 * before their body was read; then not again here). Not registered as a guard of its own.
 */
@Injectable()
export class OrganizationThrottlerGuard extends ThrottlerGuard {
  constructor(
    @InjectThrottlerOptions() options: ThrottlerModuleOptions,
    // One of the two sliding-window stores (rate-limit.module.ts), which charge a cost.
    @InjectThrottlerStorage() private readonly store: SlidingWindowStorage,
    reflector: Reflector,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly metrics: Metrics,
  ) {
    super(options, store, reflector);
  }

  /**
   * Straight to `handleRequest`: the base class would first read six throttler decorators from
   * the handler and class by reflection and resolve the configured limit and TTL, on every
   * request, for values `handleRequest` does not use (the budget is the caller's; nothing in the
   * app uses @SkipThrottle or @Throttle).
   */
  override canActivate(context: ExecutionContext): Promise<boolean> {
    return this.admit(context, false);
  }

  /**
   * Charges the request. `refused`: it will be answered 401, 403 or 400 without running, so it
   * costs one unit whatever its operation's cost (docs/decisions/0019).
   */
  async admit(context: ExecutionContext, refused: boolean): Promise<boolean> {
    const req = asPlatformRequest(context.switchToHttp().getRequest());
    if (!req.principal && req.rateLimitCharged) return true;
    const res = context.switchToHttp().getResponse<Response>();
    let budget = this.budgetOf(req);
    const windowMs = this.config.rateLimit.windowMs;
    // An organization pays what the operation costs; a caller without a valid token is refused
    // before any work, so one unit of its IP's budget.
    const contract = req.principal ? contractRouteFor(context) : null;
    const cost = contract && !refused ? operationCost(contract.operation) : DEFAULT_OPERATION_COST;
    let record = await charge(this.store, budget, windowMs, cost);
    if (record.isBlocked && req.principal && contract && !refused) {
      const key = `${contract.route.method} ${contract.route.path}`;
      if (req.principal.role === 'admin' && ADMIN_RESERVE_OPERATIONS.has(key)) {
        budget = adminReserve(req.principal);
        record = await charge(this.store, budget, windowMs, cost);
      }
    }
    const refusal = applyRecord(res, budget, record, windowMs, cost);
    // `GET /v1/organization` reports it: one charge, so body and headers agree.
    if (req.principal) {
      req.rateLimit = {
        limit: budget.limit,
        remaining: record.remaining,
        resetAtMs: record.resetAtMs,
      };
    }
    if (refusal) {
      this.metrics.rateLimitRejections.inc({ budget: budget.metric });
      throw new ProblemException(refusal.code, refusal.detail, refusal);
    }
    return true;
  }

  private budgetOf(req: PlatformRequest): Budget {
    const principal = req.principal;
    // The portal's own calls have a budget of their own, so an integration that spends the
    // organization's cannot lock its admins out of the portal (and the reverse).
    if (principal?.kind === 'oauth_access_token' && isPortalClient(principal.clientId)) {
      return {
        key: `org:${principal.organizationId}:portal`,
        limit: principal.rateLimitPerMinute,
        policy: 'default',
        metric: 'portal',
      };
    }
    if (req.principal) {
      return {
        key: `org:${req.principal.organizationId}`,
        limit: req.principal.rateLimitPerMinute,
        policy: 'default',
        metric: 'organization',
      };
    }
    return anonymousBudget(req, this.config);
  }
}

/** An admin's reserve for acting on credentials and members while the organization is over. */
function adminReserve(principal: Principal): Budget {
  return {
    key: `org:${principal.organizationId}:admin`,
    limit: ADMIN_RESERVE_PER_WINDOW,
    policy: 'admin_reserve',
    metric: 'admin_reserve',
  };
}

/** Requests to the API (and anything else) without a valid token: per client IP. */
export function anonymousBudget(req: PlatformRequest, config: AppConfig): Budget {
  return {
    key: `ip:${normalizeIp(req.ip)}`,
    limit: config.rateLimit.anonymousPerMinute,
    policy: 'default',
    metric: 'anonymous',
  };
}

/** `::ffff:10.0.0.1` and `10.0.0.1` are one client. */
export function normalizeIp(ip: string | undefined): string {
  if (!ip || !ipaddr.isValid(ip)) return ip ?? 'unknown';
  return ipaddr.process(ip).toString();
}
