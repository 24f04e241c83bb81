import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { NextFunction, Request, Response } from 'express';

/**
 * The release this server belongs to: apps/server/package.json's version, which the release's
 * fixed version group keeps equal to the contract's and every SDK's. Read at run time (from
 * src/ under the tests, dist/ in production, both two levels below package.json) so a version
 * bump needs no rebuild of a constant.
 */
export const SERVER_VERSION: string = (
  JSON.parse(readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8')) as {
    version: string;
  }
).version;

/** The response header that names the release, so a client's log shows which server answered. */
export const VERSION_HEADER = 'Platform-Version';

/** Sets `Platform-Version` on every response, errors and refusals included. */
export function versionHeaderMiddleware(_req: Request, res: Response, next: NextFunction): void {
  res.setHeader(VERSION_HEADER, SERVER_VERSION);
  next();
}
