import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Request, Response, Router } from 'express';
import { Clock } from '../common/clock';
import { APP_CONFIG } from '../config/config.module';
import { type AppConfig, serverOrigin } from '../config/env';
import { isSameOriginPost } from '../common/same-origin';
import { escapeHtml, page } from '../oauth/pages';
import { MIN_PASSWORD_LENGTH, passwordProblem } from '../oauth/password-policy';
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
  expired: {
    status: 410,
    message: 'This invitation has expired. Ask an admin of the organization for a new one.',
  },
};

function acceptForm(input: {
  token: string;
  email: string;
  name?: string;
  error?: string;
}): string {
  return page(
    'Accept your invitation',
    `<h1>Join your organization</h1>
<p>You were invited as <strong>${escapeHtml(input.email)}</strong>. Choose a password to create your account.</p>
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
<button type="submit" class="primary">Create my account</button>
</form>`,
  );
}

/** For an address that already has an account: its password joins it to the organization. */
function joinForm(input: { token: string; email: string; error?: string }): string {
  return page(
    'Accept your invitation',
    `<h1>Join another organization</h1>
<p>You were invited as <strong>${escapeHtml(input.email)}</strong>, which already has an account. Enter its password to add this organization to it.</p>
${input.error ? `<p class="error" role="alert">${escapeHtml(input.error)}</p>` : ''}
<form method="post" action="/invitations/accept">
<input type="hidden" name="token" value="${escapeHtml(input.token)}">
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" maxlength="1024" required>
<button type="submit" class="primary">Join</button>
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
    const existing = await this.invitations.hasAccount(invitation.email);
    sendPage(
      res,
      200,
      existing
        ? joinForm({ token, email: invitation.email })
        : acceptForm({ token, email: invitation.email }),
    );
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
    if (await this.invitations.hasAccount(invitation.email)) {
      const joined = await this.invitations.accept(token, { password, name: '' }, req.ip);
      if (joined.ok) return res.redirect(303, `${this.origin}${PORTAL_PATH}`);
      if (joined.reason !== 'password') return this.ended(res, joined.reason);
      const error = 'The password is not right.';
      return sendPage(res, 400, joinForm({ token, email: invitation.email, error }));
    }
    const again = (error: string) =>
      sendPage(res, 400, acceptForm({ token, email: invitation.email, name, error }));
    const problem = passwordProblem(password, [invitation.email, name]);
    if (problem) return again(`The password ${problem}.`);
    if (password !== formField(req, 'password_confirmation')) {
      return again('The two passwords are not the same.');
    }
    const result = await this.invitations.accept(token, { password, name }, req.ip);
    if (!result.ok) return this.ended(res, result.reason);
    res.redirect(303, `${this.origin}${PORTAL_PATH}`);
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
