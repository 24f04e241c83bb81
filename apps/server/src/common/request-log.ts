import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';
import type { Metrics } from '../metrics/metrics';
import type { PlatformRequest } from './http-context';

/** The matched route pattern (with its router's mount path), or undefined. */
export function routePatternOf(req: Request): string | undefined {
  const pattern = (req as PlatformRequest).routePattern;
  if (pattern) return pattern;
  const path = (req.route as { path?: string } | undefined)?.path;
  return path === undefined ? undefined : `${req.baseUrl}${path}`;
}

/**
 * One JSON line per request, written when the response finishes: request id, organization,
 * method, route, status and latency. Written here rather than with pino-http because pino-http
 * builds a child logger and serialises the request on every request, even at levels that log
 * nothing; the benchmark measured that at about 12% of a list request's CPU.
 */
export function requestLogMiddleware(logger: Logger) {
  return (req: Request, res: Response, next: NextFunction): void => {
    if (!logger.isLevelEnabled('info')) {
      next();
      return;
    }
    const started = process.hrtime.bigint();
    res.once('finish', () => {
      const r = req as PlatformRequest;
      const route = routePatternOf(req);
      logger.info(
        {
          request_id: r.id,
          organization_id: r.principal?.organizationId,
          method: req.method,
          // The route pattern, not the URL: query strings can carry values nobody should log, and
          // an unmatched path a mistyped link token or an email (the request log's marker too).
          route: route ?? 'unmatched',
          status: res.statusCode,
          latency_ms: Number(process.hrtime.bigint() - started) / 1e6,
        },
        'request',
      );
    });
    next();
  };
}

/**
 * Request count and latency per route pattern, method and status, for `/metrics`. Requests that
 * match no route are labelled `unmatched` (their paths are unbounded, and so would the labels be).
 */
export function requestMetricsMiddleware(metrics: Metrics) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const started = process.hrtime.bigint();
    res.once('finish', () => {
      const route = routePatternOf(req) ?? 'unmatched';
      const labels = { route, method: req.method, status: String(res.statusCode) };
      metrics.httpDuration.observe(labels, Number(process.hrtime.bigint() - started) / 1e9);
    });
    next();
  };
}
