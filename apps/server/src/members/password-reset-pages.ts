import { setTimeout as sleep } from 'node:timers/promises';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Request, Response, Router } from 'express';
import { isSameOriginPost } from '../common/same-origin';
import { APP_CONFIG } from '../config/config.module';
import { type AppConfig, serverOrigin } from '../config/env';
import { escapeHtml, page } from '../oauth/pages';
import { MIN_PASSWORD_LENGTH, passwordProblem } from '../oauth/password-policy';
import { PORTAL_PATH } from './accept-pages';
import { formField, formPagesRouter, messagePage, sendPage } from './form-pages';
import { PASSWORD_RESET_PATH, PasswordResetsService } from './password-resets.service';

/**
 * Every answer to a reset request takes at least this long (the link is written and queued off
 * the answer's path), so an address with an account and one without cannot be told apart by
 * timing.
 */
export const PASSWORD_RESET_ANSWER_MS = 300;

const TITLE = 'Reset your password';

function requestForm(input: { email?: string; error?: string } = {}): string {
  return page(
    TITLE,
    `<h1>${TITLE}</h1>
<p>Enter the email address you sign in with. If it belongs to an account, we will send it a link to choose a new password.</p>
${input.error ? `<p class="error" role="alert">${escapeHtml(input.error)}</p>` : ''}
<form method="post" action="${PASSWORD_RESET_PATH}">
<label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="username" maxlength="320" required value="${escapeHtml(input.email ?? '')}">
<button type="submit" class="primary">Send me a link</button>
</form>`,
  );
}

function newPasswordForm(input: { token: string; email: string; error?: string }): string {
  return page(
    TITLE,
    `<h1>Choose a new password</h1>
<p>Choosing one signs you out of every browser.</p>
${input.error ? `<p class="error" role="alert">${escapeHtml(input.error)}</p>` : ''}
<form method="post" action="${PASSWORD_RESET_PATH}/new">
<input type="hidden" name="token" value="${escapeHtml(input.token)}">
<label for="username">Email</label>
<input id="username" name="username" type="email" autocomplete="username" readonly value="${escapeHtml(input.email)}">
<label for="password">New password (at least ${MIN_PASSWORD_LENGTH} characters)</label>
<input id="password" name="password" type="password" autocomplete="new-password" minlength="${MIN_PASSWORD_LENGTH}" maxlength="1024" required>
<label for="password_confirmation">New password again</label>
<input id="password_confirmation" name="password_confirmation" type="password" autocomplete="new-password" required>
<button type="submit" class="primary">Set my password</button>
</form>`,
  );
}

const ENDED_LINK = messagePage(
  TITLE,
  'This link cannot be used',
  'Password reset links work once, for 30 minutes, and only the newest one works. Ask for a new one.',
  `<p><a href="${PASSWORD_RESET_PATH}">Ask for a new link</a></p>`,
);

/**
 * The password reset pages, linked from the sign-in page: ask for a link by address, then choose
 * a new password from the link. Server-rendered like the other sign-in pages (no script,
 * labelled fields); a POST from another site is refused, and the second form carries the link's
 * token, which another site cannot know. Whether an address has an account shows in no answer:
 * same page, same status, and at least `PASSWORD_RESET_ANSWER_MS` either way.
 */
@Injectable()
export class PasswordResetPages {
  private readonly logger = new Logger('PasswordReset');
  private readonly origin: string;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly resets: PasswordResetsService,
  ) {
    this.origin = serverOrigin(config);
  }

  router(): Router {
    return formPagesRouter(
      this.logger,
      'A password reset',
      {
        '/': {
          get: (_req, res) => Promise.resolve(sendPage(res, 200, requestForm())),
          post: (req, res) => this.request(req, res),
        },
        '/new': {
          get: (req, res) => this.show(req, res),
          post: (req, res) => this.reset(req, res),
        },
      },
      (_req, res, next) => {
        if (this.resets.available) return next();
        const message =
          'This server does not send email, so passwords cannot be reset here. Ask an admin of your organization for help.';
        sendPage(res, 404, messagePage(TITLE, 'Password reset is not available', message));
      },
    );
  }

  private async request(req: Request, res: Response): Promise<void> {
    if (!this.ownPage(req, res)) return;
    const started = Date.now();
    const email = formField(req, 'email').trim();
    if (!/^[^\s@]+@[^\s@]+$/.test(email) || email.length > 320) {
      return sendPage(
        res,
        400,
        requestForm({ email, error: 'Enter the email address you sign in with.' }),
      );
    }
    const wait = await this.resets.throttled(email, req.ip);
    // Off the answer's path: only an address with an account writes and queues a link, so its
    // time or its failure would tell the two apart. A link lost to a failure is asked for again.
    if (!wait) {
      void this.resets
        .request(email)
        .catch((error: unknown) =>
          this.logger.error(`Could not queue a password reset link: ${(error as Error).message}`),
        );
    }
    await sleep(Math.max(0, started + PASSWORD_RESET_ANSWER_MS - Date.now()));
    if (wait) {
      res.setHeader('Retry-After', String(wait));
      const message = `Too many requests for a reset link. Try again in ${wait} seconds.`;
      return sendPage(res, 429, requestForm({ email, error: message }));
    }
    const message = `If ${email} belongs to an account, a link to choose a new password is on its way to it. It works for 30 minutes.`;
    sendPage(res, 200, messagePage(TITLE, 'Check your email', message));
  }

  private async show(req: Request, res: Response): Promise<void> {
    const token = typeof req.query.token === 'string' ? req.query.token : '';
    const user = await this.resets.findByToken(token);
    if (!user) return sendPage(res, 410, ENDED_LINK);
    sendPage(res, 200, newPasswordForm({ token, email: user.email }));
  }

  private async reset(req: Request, res: Response): Promise<void> {
    if (!this.ownPage(req, res)) return;
    const token = formField(req, 'token');
    const password = formField(req, 'password');
    const user = await this.resets.findByToken(token);
    if (!user) return sendPage(res, 410, ENDED_LINK);
    const again = (error: string) =>
      sendPage(res, 400, newPasswordForm({ token, email: user.email, error }));
    const problem = passwordProblem(password, [user.email]);
    if (problem) return again(`The password ${problem}.`);
    if (password !== formField(req, 'password_confirmation')) {
      return again('The two passwords are not the same.');
    }
    if (!(await this.resets.complete(token, password, req.ip))) {
      return sendPage(res, 410, ENDED_LINK);
    }
    const done = messagePage(
      TITLE,
      'Your password is changed',
      'Every browser that was signed in is signed out, the portal included. Apps you approved and your personal access tokens keep working. Sign in with the new password.',
      `<p><a href="${this.origin}${PORTAL_PATH}">Sign in</a></p>`,
    );
    sendPage(res, 200, done);
  }

  /** A POST from another site's page is refused. */
  private ownPage(req: Request, res: Response): boolean {
    if (isSameOriginPost(req, this.origin)) return true;
    const message = 'This form can only be sent from its own page. Open it again.';
    sendPage(res, 403, messagePage('Cannot continue', 'Cannot continue', message));
    return false;
  }
}
