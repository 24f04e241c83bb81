import type { NextFunction, Request, Response } from 'express';
import type { PlatformRequest } from './http-context';
import { randomHex } from './random-pool';

const VALID_INCOMING = /^[A-Za-z0-9._:-]{1,128}$/;

/** Echo a well-formed incoming X-Request-Id, otherwise mint `req_…`; set it on every response. */
export function requestIdMiddleware(req: Request, res: Response, next: NextFunction): void {
  const incoming = req.headers['x-request-id'];
  const id =
    typeof incoming === 'string' && VALID_INCOMING.test(incoming)
      ? incoming
      : `req_${randomHex(12)}`;
  (req as PlatformRequest).id = id;
  res.setHeader('X-Request-Id', id);
  next();
}
