import type { Logger } from '@nestjs/common';
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import { ProblemException } from '../common/problem.exception';
import { escapeHtml, page } from '../oauth/pages';

/**
 * What the server-rendered pages outside the authorization server share (accepting an
 * invitation, resetting a password): plain HTML forms that post back to their own page.
 */

/** A field of the urlencoded form body, or '' when absent or repeated. */
export function formField(req: Request, name: string): string {
  const value = (req.body as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value : '';
}

/** Never cached, never sent on as a Referer: the URLs carry one-time tokens. */
export function noStore(_req: Request, res: Response, next: NextFunction): void {
  res.setHeader('Cache-Control', 'no-store');
  next();
}

/** Sends `body`; its forms may post back to this server (the CSP's `form-action 'self'`). */
export function sendPage(res: Response, status: number, body: string): void {
  const csp = String(res.getHeader('Content-Security-Policy') ?? '');
  res.setHeader('Content-Security-Policy', csp.replace("form-action 'none'", "form-action 'self'"));
  res.status(status).type('html').send(body);
}

/** A page that only says something: `message` is text, `extra` trusted HTML after it. */
export function messagePage(title: string, heading: string, message: string, extra = ''): string {
  return page(title, `<h1>${escapeHtml(heading)}</h1><p>${escapeHtml(message)}</p>${extra}`);
}

/**
 * Runs a page's handler; its errors become a page: a 4xx problem is the user's to read, anything
 * else is logged (by name only: a message may quote a token) and answered as ours.
 */
export function pageHandler(
  logger: Logger,
  what: string,
  handler: (req: Request, res: Response) => Promise<void>,
) {
  return (req: Request, res: Response) => {
    handler(req, res).catch((error: unknown) => {
      if (res.headersSent) return;
      if (error instanceof ProblemException && error.status < 500) {
        return sendPage(
          res,
          error.status,
          messagePage('Cannot continue', 'Cannot continue', error.detail),
        );
      }
      logger.error(`${what} failed: ${(error as Error).name}`);
      sendPage(
        res,
        500,
        messagePage(
          'Cannot continue',
          'Cannot continue',
          'Something went wrong on our side. Try your link again later.',
        ),
      );
    });
  };
}

type PageHandler = (req: Request, res: Response) => Promise<void>;

/**
 * The pages' router: never cached, each path's GET and (form-parsed) POST run through
 * `pageHandler`; `before` runs first on every request (a page that may be switched off).
 */
export function formPagesRouter(
  logger: Logger,
  what: string,
  pages: Record<string, { get?: PageHandler; post?: PageHandler }>,
  before?: (req: Request, res: Response, next: NextFunction) => void,
): Router {
  const router = express.Router();
  const form = express.urlencoded({ extended: false, limit: '16kb' });
  router.use(noStore);
  if (before) router.use(before);
  for (const [path, { get, post }] of Object.entries(pages)) {
    if (get) router.get(path, pageHandler(logger, what, get));
    if (post) router.post(path, form, pageHandler(logger, what, post));
  }
  return router;
}
