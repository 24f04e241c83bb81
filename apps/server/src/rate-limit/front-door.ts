import { OAUTH_PATHS } from '@platform/contract';
import type { NextFunction, Request, Response } from 'express';
import type { PlatformRequest } from '../common/http-context';
import { type ProblemAnswer, sendProblem } from '../common/problem-details.filter';
import type { AppConfig } from '../config/env';
import type { Metrics } from '../metrics/metrics';
import { constantTimeEqual } from '../security/crypto';
import {
  anonymousBudget,
  applyRecord,
  type Budget,
  charge,
  normalizeIp,
} from './organization-throttler.guard';
import type { SlidingWindowStorage } from './sliding-window.store';

export interface FrontDoorDependencies {
  config: AppConfig;
  storage: SlidingWindowStorage;
  metrics: Metrics;
  /** The request's bearer authentication, resolved once and kept on the request; never rejects. */
  bearer: { authenticate(req: PlatformRequest): Promise<{ ok: boolean }> };
  /** The confidential OAuth client an `Authorization: Basic` header proves to be, or null. */
  oauthClients: { authenticateBasic(header: string | undefined): Promise<string | null> };
}

/**
 * The first thing every request meets after its id and log line, before any body is read and
 * before the authorization server: a request without a valid credential is charged to its
 * client IP's budget here, and over budget it is answered 429 at once, its body never read or
 * parsed. So every answer to an anonymous caller counts (404, 405, 406, 413, 415, 400s for bad
 * JSON, NUL or depth, 401s, failed OAuth calls), and one over its budget costs next to nothing.
 *
 * - A valid bearer token passes; its organization's budget is charged by the throttler guard
 *   on API routes. An invalid one is anonymous (and the token is looked up only once).
 * - `/oauth/…` and the metadata have their own per-IP budget (sign-in pages, token calls);
 *   a confidential client that authenticates with HTTP Basic is charged to its own budget.
 * - Health probes and authenticated metrics scrapes without a body are never limited, so a
 *   load balancer or Prometheus never sees 429.
 */
export function frontDoorMiddleware(deps: FrontDoorDependencies) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const platformReq = req as PlatformRequest;
    admit(deps, platformReq, res).then((refusal) => {
      if (!refusal) return next();
      // Answered here rather than raised: an error would walk every route layer of the app.
      sendProblem(platformReq, res, refusal);
    }, next);
  };
}

async function admit(
  deps: FrontDoorDependencies,
  req: PlatformRequest,
  res: Response,
): Promise<ProblemAnswer | undefined> {
  if (isExempt(req, deps.config)) return undefined;
  const budget = await budgetOf(deps, req);
  if (!budget) return undefined;
  const windowMs = deps.config.rateLimit.windowMs;
  const record = await charge(deps.storage, budget, windowMs);
  req.rateLimitCharged = true;
  const refusal = applyRecord(res, budget, record, windowMs);
  if (refusal) {
    deps.metrics.rateLimitRejections.inc({ budget: budget.metric });
    if (hasBody(req)) {
      // The body is never read: Node would drain it before closing (a megabyte costs more CPU
      // than the whole refusal), so the connection ends as soon as the answer is out.
      res.setHeader('Connection', 'close');
      res.once('finish', () => req.socket.destroy());
    }
  }
  return refusal;
}

async function budgetOf(
  deps: FrontDoorDependencies,
  req: PlatformRequest,
): Promise<Budget | undefined> {
  const { config } = deps;
  if (isOAuthPath(req.path)) {
    const clientId =
      req.method === 'POST' && req.headers.authorization
        ? await deps.oauthClients.authenticateBasic(req.headers.authorization)
        : null;
    return clientId
      ? {
          key: `oauth:client:${clientId}`,
          limit: config.rateLimit.oauthClientPerMinute,
          policy: 'oauth_client',
          metric: 'oauth_client',
        }
      : {
          key: `oauth:ip:${normalizeIp(req.ip)}`,
          limit: config.rateLimit.oauthPerMinute,
          policy: 'oauth',
          metric: 'oauth',
        };
  }
  const authentication = await deps.bearer.authenticate(req);
  return authentication.ok ? undefined : anonymousBudget(req, config);
}

function isOAuthPath(path: string): boolean {
  return path.startsWith('/oauth/') || path === OAUTH_PATHS.metadata;
}

const PROBES = new Set(['/health/live', '/health/ready']);

function isExempt(req: Request, config: AppConfig): boolean {
  if ((req.method !== 'GET' && req.method !== 'HEAD') || hasBody(req)) return false;
  if (PROBES.has(req.path)) return true;
  return (
    req.path === '/metrics' &&
    config.metricsToken !== undefined &&
    constantTimeEqual(req.headers.authorization ?? '', `Bearer ${config.metricsToken}`)
  );
}

function hasBody(req: Request): boolean {
  return (
    req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0
  );
}
