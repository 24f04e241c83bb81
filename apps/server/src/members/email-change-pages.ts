import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Request, Response, Router } from 'express';
import { isSameOriginPost } from '../common/same-origin';
import { APP_CONFIG } from '../config/config.module';
import { type AppConfig, serverOrigin } from '../config/env';
import { escapeHtml, page } from '../oauth/pages';
import { PORTAL_PATH } from './accept-pages';
import { EMAIL_CHANGE_PATH, EmailChangesService } from './email-changes.service';
import { formField, formPagesRouter, messagePage, sendPage } from './form-pages';

const TITLE = 'Confirm your new email';

const ENDED_LINK = messagePage(
  TITLE,
  'This link cannot be used',
  'Email confirmation links work once, for 24 hours, and only the newest one works. Ask for the change again on your account page.',
);

/**
 * The page the link mailed to a new address opens: one button that confirms it (a GET changes
 * nothing, so a mail scanner following the link does not confirm for the person). CSRF: the
 * form carries the link's token, and a POST from another site is refused.
 */
@Injectable()
export class EmailChangePages {
  private readonly logger = new Logger('EmailChange');
  private readonly origin: string;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly changes: EmailChangesService,
  ) {
    this.origin = serverOrigin(config);
  }

  router(): Router {
    return formPagesRouter(this.logger, 'An email change', {
      '/': { get: (req, res) => this.show(req, res), post: (req, res) => this.confirm(req, res) },
    });
  }

  private async show(req: Request, res: Response): Promise<void> {
    const token = typeof req.query.token === 'string' ? req.query.token : '';
    const user = await this.changes.findByToken(token);
    if (!user?.pendingEmail) return sendPage(res, 410, ENDED_LINK);
    const body = `<h1>${TITLE}</h1>
<p>Make <strong>${escapeHtml(user.pendingEmail)}</strong> the email you sign in with, instead of ${escapeHtml(user.email)}?</p>
<form method="post" action="${EMAIL_CHANGE_PATH}">
<input type="hidden" name="token" value="${escapeHtml(token)}">
<button type="submit" class="primary">Confirm my new email</button>
</form>`;
    sendPage(res, 200, page(TITLE, body));
  }

  private async confirm(req: Request, res: Response): Promise<void> {
    if (!isSameOriginPost(req, this.origin)) {
      const message = 'This form can only be sent from its own page. Open your link again.';
      return sendPage(res, 403, messagePage('Cannot continue', 'Cannot continue', message));
    }
    const user = await this.changes.confirm(formField(req, 'token'), req.ip);
    if (!user) return sendPage(res, 410, ENDED_LINK);
    const done = messagePage(
      TITLE,
      'Your email is changed',
      `You sign in with ${user.email} from now on.`,
      `<p><a href="${this.origin}${PORTAL_PATH}">Go to the portal</a></p>`,
    );
    sendPage(res, 200, done);
  }
}
