import { escapeHtml } from '../oauth/pages';

/** A message as the outbox stores it: rendered once, as plain text and as HTML. */
export interface RenderedMail {
  subject: string;
  text: string;
  html: string;
}

export interface InvitationMail {
  organizationName: string;
  /** Who invited, as the organization knows them (name, else email); null for an API client. */
  inviter: string | null;
  role: string;
  acceptUrl: string;
  expiresAt: Date;
}

/**
 * The invitation: who asks, for which organization and role, the one-time link and until when
 * it works. Every value goes through `escapeHtml` in the HTML part.
 */
export function invitationMail(input: InvitationMail): RenderedMail {
  const who = input.inviter ?? `An admin of ${input.organizationName}`;
  const until = input.expiresAt.toUTCString();
  const subject = (
    input.inviter
      ? `${input.inviter} invited you to ${input.organizationName}`
      : `You are invited to ${input.organizationName}`
  ).slice(0, 300);
  const text = [
    `${who} invited you to join ${input.organizationName} on Platform as ${input.role}.`,
    '',
    'Open this link to set your password and join:',
    input.acceptUrl,
    '',
    `The link works once, until ${until}. If you did not expect this invitation, ignore this message: nothing happens unless the link is opened.`,
  ].join('\n');
  const html = `<!doctype html>
<html><body style="font-family: sans-serif; line-height: 1.5">
<p>${escapeHtml(who)} invited you to join <strong>${escapeHtml(input.organizationName)}</strong> on Platform as <strong>${escapeHtml(input.role)}</strong>.</p>
<p><a href="${escapeHtml(input.acceptUrl)}">Set your password and join</a></p>
<p>The link works once, until ${escapeHtml(until)}. If you did not expect this invitation, ignore this message: nothing happens unless the link is opened.</p>
</body></html>
`;
  return { subject, text, html };
}

export interface PasswordResetMail {
  organizationName: string;
  resetUrl: string;
  expiresAt: Date;
}

/** The password reset link, for whoever holds the address; asking for it changes nothing. */
export function passwordResetMail(input: PasswordResetMail): RenderedMail {
  const until = input.expiresAt.toUTCString();
  const subject = `Reset your Platform password for ${input.organizationName}`.slice(0, 300);
  const text = [
    `Someone asked to reset the password of your Platform account at ${input.organizationName}.`,
    '',
    'Open this link to choose a new password:',
    input.resetUrl,
    '',
    `The link works once, until ${until}. Choosing a new password signs you out of every browser. If you did not ask for this, ignore this message: your password stays as it is.`,
  ].join('\n');
  const html = `<!doctype html>
<html><body style="font-family: sans-serif; line-height: 1.5">
<p>Someone asked to reset the password of your Platform account at <strong>${escapeHtml(input.organizationName)}</strong>.</p>
<p><a href="${escapeHtml(input.resetUrl)}">Choose a new password</a></p>
<p>The link works once, until ${escapeHtml(until)}. Choosing a new password signs you out of every browser. If you did not ask for this, ignore this message: your password stays as it is.</p>
</body></html>
`;
  return { subject, text, html };
}

export interface EmailChangeMail {
  organizationName: string;
  /** The account's current address. */
  current: string;
  confirmUrl: string;
  expiresAt: Date;
}

/** To the new address: the link that makes it the account's email. */
export function emailChangeMail(input: EmailChangeMail): RenderedMail {
  const until = input.expiresAt.toUTCString();
  const subject = 'Confirm your new Platform email';
  const text = [
    `The Platform account ${input.current} at ${input.organizationName} asked to use this address from now on.`,
    '',
    'Open this link to confirm it:',
    input.confirmUrl,
    '',
    `The link works once, until ${until}. If you did not ask for this, ignore this message: nothing changes unless the link is opened.`,
  ].join('\n');
  const html = `<!doctype html>
<html><body style="font-family: sans-serif; line-height: 1.5">
<p>The Platform account ${escapeHtml(input.current)} at <strong>${escapeHtml(input.organizationName)}</strong> asked to use this address from now on.</p>
<p><a href="${escapeHtml(input.confirmUrl)}">Confirm this address</a></p>
<p>The link works once, until ${escapeHtml(until)}. If you did not ask for this, ignore this message: nothing changes unless the link is opened.</p>
</body></html>
`;
  return { subject, text, html };
}

/** To a new address that already has an account: told here, never in the API's answer. */
export function emailInUseMail(input: { organizationName: string }): RenderedMail {
  const text = `A Platform account at ${input.organizationName} asked to use this address, but it already belongs to a Platform account, so nothing changed. If you did not expect this, ignore this message.`;
  return {
    subject: 'This address already has a Platform account',
    text,
    html: `<!doctype html>
<html><body style="font-family: sans-serif; line-height: 1.5">
<p>${escapeHtml(text)}</p>
</body></html>
`,
  };
}

/** To the old address once the change is made: whoever lost the account learns of it. */
export function emailChangedMail(input: { organizationName: string; next: string }): RenderedMail {
  const text = `The email of your Platform account at ${input.organizationName} is now ${input.next}; sign in with it from now on. If you did not do this, tell an admin of ${input.organizationName} at once.`;
  return {
    subject: 'Your Platform email was changed',
    text,
    html: `<!doctype html>
<html><body style="font-family: sans-serif; line-height: 1.5">
<p>${escapeHtml(text)}</p>
</body></html>
`,
  };
}
