import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Request, Response, Router } from 'express';
import { Clock } from '../common/clock';
import { APP_CONFIG } from '../config/config.module';
import { type AppConfig, serverOrigin } from '../config/env';
import { isSameOriginPost } from '../common/same-origin';
import { escapeHtml, page } from '../oauth/pages';
import { MIN_PASSWORD_LENGTH, passwordProblem } from '../oauth/password-policy';
import { UsersService } from '../oauth/users.service';
import { formField, formPagesRouter, messagePage, sendPage } from './form-pages';
import { invitationEnded, InvitationsService } from './invitations.service';

/** Where a new member lands: the portal, served by the server under this path. */
export const PORTAL_PATH = '/portal/';

const ENDED: Record<string, { status: number; message: string }> = {
  unknown: {
    status: 404,
    message: 'This invitation link is not valid. Check that you copied all of it.',
  },
  used: {
    status: 410,
    message:
      'This invitation has already been used. Sign in with the account it created, or ask an admin for a new invitation.',
  },
  revoked: {
    status: 410,
    message: 'This invitation was withdrawn. Ask an admin of the organization for a new one.',
  },
  retry: {
    status: 409,
    message:
      'The account of this address changed while you were accepting. Open your invitation link again.',
  },
  expired: {
    status: 410,
    message: 'This invitation has expired. Ask an admin of the organization for a new one.',
  },
};

/**
 * The one page for every invitee, whether or not the address has an account (nothing an inviter
 * holding the link sees may tell them): a new person chooses a password, someone with an account
 * enters its password and joins with it (decision 34).
 */
function acceptForm(input: {
  token: string;
  email: string;
  name?: string;
  error?: string;
}): string {
  return page(
    'Accept your invitation',
    `<h1>Join your organization</h1>
<p>You were invited as <strong>${escapeHtml(input.email)}</strong>. Choose a password to create your account. If this address already has an account, enter its password instead: the organization is added to it.</p>
${input.error ? `<p class="error" role="alert">${escapeHtml(input.error)}</p>` : ''}
<form method="post" action="/invitations/accept">
<input type="hidden" name="token" value="${escapeHtml(input.token)}">
<label for="name">Your name (optional)</label>
<input id="name" name="name" type="text" autocomplete="name" maxlength="200" value="${escapeHtml(input.name ?? '')}">
<label for="password">Password (at least ${MIN_PASSWORD_LENGTH} characters)</label>
<input id="password" name="password" type="password" autocomplete="new-password" minlength="${MIN_PASSWORD_LENGTH}" maxlength="1024" required aria-describedby="password-help">
<p id="password-help">Use a password manager, or a long phrase you do not use anywhere else.</p>
<label for="password_confirmation">Password again</label>
<input id="password_confirmation" name="password_confirmation" type="password" autocomplete="new-password" required>
<button type="submit" class="primary">Accept invitation</button>
</form>`,
  );
}

/**
 * The page an invitee opens from their link: server-rendered like the OAuth sign-in pages (no
 * script, labelled fields). CSRF: the form carries the one-time token itself, which another
 * site cannot know, and a POST whose `Origin` (or `Sec-Fetch-Site`) says it came from another
 * site is refused.
 */
@Injectable()
export class AcceptInvitationPages {
  private readonly logger = new Logger('Invitations');
  private readonly origin: string;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly invitations: InvitationsService,
    private readonly users: UsersService,
    private readonly clock: Clock,
  ) {
    this.origin = serverOrigin(config);
  }

  router(): Router {
    return formPagesRouter(this.logger, 'Accepting an invitation', {
      '/': { get: (req, res) => this.show(req, res), post: (req, res) => this.accept(req, res) },
    });
  }

  private async show(req: Request, res: Response): Promise<void> {
    const token = typeof req.query.token === 'string' ? req.query.token : '';
    const invitation = await this.invitations.findByToken(token);
    const ended = invitationEnded(invitation, this.clock.now());
    if (ended || !invitation) return this.ended(res, ended ?? 'unknown');
    sendPage(res, 200, acceptForm({ token, email: invitation.email }));
  }

  private async accept(req: Request, res: Response): Promise<void> {
    if (!this.sameOrigin(req)) {
      const message =
        'This form can only be sent from its own page. Open your invitation link again.';
      return sendPage(res, 403, messagePage('Cannot continue', 'Cannot continue', message));
    }
    const token = formField(req, 'token');
    const name = formField(req, 'name').trim().slice(0, 200);
    const password = formField(req, 'password');
    const invitation = await this.invitations.findByToken(token);
    const ended = invitationEnded(invitation, this.clock.now());
    if (ended || !invitation) return this.ended(res, ended ?? 'unknown');
    const again = (status: number, error: string) =>
      sendPage(res, status, acceptForm({ token, email: invitation.email, name, error }));
    // The password may be an account's: guessed no faster here than on the sign-in page.
    const wait = await this.users.loginThrottled(invitation.email, req.ip ?? 'unknown');
    if (wait) {
      res.setHeader('Retry-After', String(wait));
      return again(429, `Too many attempts. Try again in ${wait} seconds.`);
    }
    if (password !== formField(req, 'password_confirmation')) {
      return again(400, 'The two passwords are not the same.');
    }
    if (!(await this.invitations.hasAccount(invitation.email))) {
      const problem = passwordProblem(password, [invitation.email, name]);
      if (problem) return again(400, `The password ${problem}.`);
    }
    const result = await this.invitations.accept(token, { password, name }, req.ip);
    if (result.ok) return res.redirect(303, `${this.origin}${PORTAL_PATH}`);
    if (result.reason !== 'password') return this.ended(res, result.reason);
    return again(400, 'This address already has an account, and that is not its password.');
  }

  /** A browser names the page a form came from; a POST from another site is refused. */
  private sameOrigin(req: Request): boolean {
    return isSameOriginPost(req, this.origin);
  }

  private ended(res: Response, reason: string): void {
    const { status, message } = ENDED[reason] ?? ENDED.unknown!;
    sendPage(res, status, messagePage('Invitation', 'This invitation cannot be used', message));
  }
}
