import type { Logger } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
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
