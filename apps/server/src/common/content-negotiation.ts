import type { NextFunction, Request, Response } from 'express';
import { ProblemException } from './problem.exception';

/**
 * API routes speak JSON only: an `Accept` that cannot take JSON is 406, a request body that is
 * not JSON is 415. Absent `Accept` and `*\/*` are fine.
 */
export function contentNegotiationMiddleware(
  req: Request,
  _res: Response,
  next: NextFunction,
): void {
  if (req.headers.accept && !req.accepts(['application/json', 'application/problem+json'])) {
    next(
      new ProblemException(
        'not_acceptable',
        `This API answers with application/json; the Accept header '${req.headers.accept}' does not allow it`,
      ),
    );
    return;
  }
  const hasBody =
    req.headers['transfer-encoding'] !== undefined ||
    Number(req.headers['content-length'] ?? 0) > 0;
  if (hasBody && !req.is('application/json') && !isUpload(req)) {
    next(
      new ProblemException(
        'unsupported_media_type',
        `Request bodies must be application/json, not '${req.headers['content-type'] ?? 'none'}'`,
      ),
    );
    return;
  }
  next();
}

/** An import's file (`POST /v1/imports`) comes as multipart/form-data; its handler reads it. */
function isUpload(req: Request): boolean {
  return req.method === 'POST' && req.path === '/imports' && Boolean(req.is('multipart/form-data'));
}

/** `/api/v1/...` is served by the same handlers as `/v1/...`; `originalUrl` keeps what the caller used. */
export function apiPrefixAliasMiddleware(req: Request, _res: Response, next: NextFunction): void {
  if (req.url === '/api/v1' || req.url.startsWith('/api/v1/') || req.url.startsWith('/api/v1?')) {
    req.url = req.url.slice('/api'.length);
  }
  next();
}
