import { type ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import {
  InjectThrottlerOptions,
  InjectThrottlerStorage,
  ThrottlerGuard,
  type ThrottlerModuleOptions,
  type ThrottlerStorage,
} from '@nestjs/throttler';
import type { ThrottlerRequest } from '@nestjs/throttler/dist/throttler.guard.interface';
import type { Response } from 'express';
import ipaddr from 'ipaddr.js';
import { contractRouteOf } from '../auth/route-metadata';
import { asPlatformRequest, type PlatformRequest } from '../common/http-context';
import { ProblemException } from '../common/problem.exception';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/env';
import { Metrics } from '../metrics/metrics';
import type { SlidingWindowRecord } from './sliding-window.store';

const POLICY_NAME = 'default';

/**
 * Step 2 of 3 (auth → rate limit → scope). One budget per organization across all its tokens
 * and routes; requests without a valid token are limited per client IP. Sets the GitHub-style
 * `X-RateLimit-*` headers and the IETF draft `RateLimit` / `RateLimit-Policy` on every response.
 */
@Injectable()
export class OrganizationThrottlerGuard extends ThrottlerGuard {
  constructor(
    @InjectThrottlerOptions() options: ThrottlerModuleOptions,
    @InjectThrottlerStorage() storage: ThrottlerStorage,
    reflector: Reflector,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly metrics: Metrics,
  ) {
    super(options, storage, reflector);
  }

  protected override shouldSkip(context: ExecutionContext): Promise<boolean> {
    return Promise.resolve(!contractRouteOf(context));
  }

  protected override async handleRequest({ context }: ThrottlerRequest): Promise<boolean> {
    const req = asPlatformRequest(context.switchToHttp().getRequest());
    const res = context.switchToHttp().getResponse<Response>();
    const { key, limit } = this.budgetOf(req);
    let record: SlidingWindowRecord;
    try {
      record = (await this.storageService.increment(
        key,
        this.config.rateLimit.windowMs,
        limit,
        0,
        POLICY_NAME,
      )) as SlidingWindowRecord;
    } catch {
      // The shared counter (Redis) is unreachable: fail closed rather than serve unlimited.
      throw new ProblemException(
        'service_unavailable',
        'Rate limiting is temporarily unavailable, so the request was not served; retry shortly',
        { headers: { 'Retry-After': '1' } },
      );
    }

    const now = Date.now();
    const resetEpoch = Math.ceil(record.resetAtMs / 1000);
    const resetIn = Math.max(0, Math.ceil((record.resetAtMs - now) / 1000));
    const windowSeconds = this.config.rateLimit.windowMs / 1000;
    res.setHeader('X-RateLimit-Limit', String(limit));
    res.setHeader('X-RateLimit-Remaining', String(record.remaining));
    res.setHeader('X-RateLimit-Reset', String(resetEpoch));
    res.setHeader('RateLimit-Policy', `"${POLICY_NAME}";q=${limit};w=${windowSeconds}`);
    res.setHeader('RateLimit', `"${POLICY_NAME}";r=${record.remaining};t=${resetIn}`);

    if (record.isBlocked) {
      this.metrics.rateLimitRejections.inc({
        budget: req.principal ? 'organization' : 'anonymous',
      });
      throw new ProblemException(
        'rate_limited',
        `Rate limit of ${limit} requests per ${windowSeconds} seconds exceeded; retry in ${record.timeToBlockExpire} s`,
        { headers: { 'Retry-After': String(record.timeToBlockExpire) } },
      );
    }
    return true;
  }

  private budgetOf(req: PlatformRequest): { key: string; limit: number } {
    if (req.principal) {
      return {
        key: `org:${req.principal.organizationId}`,
        limit: req.principal.rateLimitPerMinute,
      };
    }
    return { key: `ip:${normalizeIp(req.ip)}`, limit: this.config.rateLimit.anonymousPerMinute };
  }
}

/** `::ffff:10.0.0.1` and `10.0.0.1` are one client. */
function normalizeIp(ip: string | undefined): string {
  if (!ip || !ipaddr.isValid(ip)) return ip ?? 'unknown';
  return ipaddr.process(ip).toString();
}
