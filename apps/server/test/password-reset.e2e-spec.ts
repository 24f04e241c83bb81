/**
 * Password reset by email (issue 46), through a real SMTP server on loopback: the sign-in page
 * offers it, the mailed link sets a new password once and signs the member out everywhere, and
 * no answer tells an address with an account from one without.
 */
import { AccountRecord } from '../src/oauth/entities';
import { PORTAL_CLIENT_ID } from '../src/oauth/portal-client';
import { Browser } from '../src/testing';
import { PASSWORD_RESET_ANSWER_MS } from '../src/members/password-reset-pages';
import { PASSWORD_RESET_LIMITS } from '../src/members/password-resets.service';
import { expectStatus, typedClient } from './support/api';
import { type MailCatcher, startMailCatcher } from './support/mail-catcher';
import {
  asksForPassword,
  asOperator,
  member,
  nextPerson,
  PASSWORD,
  portalSignIn,
  server,
  setUpOffboarding,
} from './support/offboarding';
import { startServer } from './support/server';

const NEW_PASSWORD = 'maple river copper lantern';

let catcher: MailCatcher;
beforeAll(async () => {
  catcher = await startMailCatcher();
});
setUpOffboarding(() => ({ SMTP_URL: catcher.url }));
afterAll(() => catcher?.close());

/** What the "Forgot your password?" form sends, from its own page. */
async function askForLink(email: string) {
  const started = Date.now();
  const res = await fetch(`${server.url}/password-reset`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: server.url },
    body: new URLSearchParams({ email }).toString(),
  });
  const body = await res.text();
  return { status: res.status, body, ms: Date.now() - started, headers: res.headers };
}

async function linkMailedTo(email: string): Promise<string> {
  const mail = await catcher.waitFor(email);
  const link = /https?:\/\/\S+\/password-reset\/new\?token=[\w-]+/.exec(mail.text ?? '')?.[0];
  if (!link) throw new Error(`no reset link in: ${mail.text}`);
  return link;
}

function setPassword(link: string, password: string, confirmation = password) {
  const token = new URL(link).searchParams.get('token')!;
  return fetch(`${server.url}/password-reset/new`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: server.url },
    body: new URLSearchParams({ token, password, password_confirmation: confirmation }).toString(),
  });
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;

describe('password reset by email', () => {
  it('is offered on the sign-in page; the link sets a new password once and ends every session', async () => {
    const someone = await member('developer');
    const session = await portalSignIn(someone.email);
    const signIn = await new Browser(server.url).follow(
      `/oauth/authorize?${new URLSearchParams({
        response_type: 'code',
        client_id: PORTAL_CLIENT_ID,
        redirect_uri: `${server.url}/portal/callback`,
        scope: 'students:read',
        code_challenge: 'x'.repeat(43),
        code_challenge_method: 'S256',
      }).toString()}`,
    );
    expect(signIn.body).toContain('<a href="/password-reset">Forgot your password?</a>');

    const asked = await askForLink(someone.email.toUpperCase());
    expect(asked.status).toBe(200);
    expect(asked.body).toContain('Check your email');
    const link = await linkMailedTo(someone.email);
    const mail = await catcher.waitFor(someone.email);
    expect(mail.subject).toBe('Reset your Platform password for Harbour School');

    const form = await fetch(link);
    expect(form.status).toBe(200);
    expect(await form.text()).toContain(someone.email);
    const set = await setPassword(link, NEW_PASSWORD);
    expect(set.status).toBe(200);
    expect(await set.text()).toContain('Your password is changed');

    // Signed out everywhere: the portal token and the sign-in session are gone.
    expect((await typedClient(server, session.token).students.list()).status).toBe(401);
    expect(await asksForPassword(session.browser)).toBe(true);
    // A personal access token is not a session: it keeps working.
    expect((await someone.api.students.list()).status).toBe(200);
    // The new password signs in; the old one no longer does.
    await expect(portalSignIn(someone.email, undefined, NEW_PASSWORD)).resolves.toHaveProperty(
      'token',
    );
    await expect(portalSignIn(someone.email)).rejects.toThrow('no code');

    // The link worked once.
    expect((await fetch(link)).status).toBe(410);
    expect((await setPassword(link, 'another long passphrase here')).status).toBe(410);

    const log = await asOperator().auditEvents.list({
      query: { action: 'user.password_reset', user_id: someone.id },
    });
    expect(expectStatus(log, 200).body.data).toMatchObject([
      { actor: { type: 'sign_in', user_id: someone.id }, target: { type: 'user', id: someone.id } },
    ]);
  });

  it('answers an address without an account exactly as one with, and mails nobody', async () => {
    const someone = await member('viewer');
    const nobody = `nobody${nextPerson()}@harbour.example`;
    const missing = await askForLink(nobody);
    const present = await askForLink(someone.email);
    expect(missing.status).toBe(present.status);
    expect(missing.body.replace(nobody, 'ADDRESS')).toBe(
      present.body.replace(someone.email, 'ADDRESS'),
    );
    // The member's mail came; by then a mail to the other address would have too.
    await linkMailedTo(someone.email);
    expect(catcher.messages.some((m) => JSON.stringify(m.to).includes(nobody))).toBe(false);
  });

  it(`takes at least ${PASSWORD_RESET_ANSWER_MS} ms either way, with medians within 100 ms`, async () => {
    const present: number[] = [];
    const missing: number[] = [];
    for (let i = 0; i < 4; i++) {
      present.push((await askForLink((await member('viewer')).email)).ms);
      missing.push((await askForLink(`ghost${nextPerson()}@harbour.example`)).ms);
    }
    for (const ms of [...present, ...missing]) {
      expect(ms).toBeGreaterThanOrEqual(PASSWORD_RESET_ANSWER_MS);
    }
    expect(Math.abs(median(present) - median(missing))).toBeLessThan(100);
  });

  it('limits requests per address alike for an address with an account and one without', async () => {
    const someone = await member('viewer');
    const nobody = `nobody${nextPerson()}@harbour.example`;
    for (const email of [someone.email, nobody]) {
      const answers = [];
      for (let i = 0; i <= PASSWORD_RESET_LIMITS.perAddress; i++)
        answers.push(await askForLink(email));
      expect(answers.map((a) => a.status)).toEqual([
        ...Array(PASSWORD_RESET_LIMITS.perAddress).fill(200),
        429,
      ]);
      expect(Number(answers.at(-1)!.headers.get('retry-after'))).toBeGreaterThan(0);
    }
  });

  it('honours only the newest, unexpired link, and keeps it through a refused password', async () => {
    const someone = await member('viewer');
    await askForLink(someone.email);
    const first = await linkMailedTo(someone.email);
    catcher.messages.length = 0;
    await askForLink(someone.email);
    const second = await linkMailedTo(someone.email);
    expect((await fetch(first)).status).toBe(410);

    const weak = await setPassword(second, 'short');
    expect(weak.status).toBe(400);
    expect(await weak.text()).toContain('at least 12 characters');
    const mismatch = await setPassword(second, NEW_PASSWORD, `${NEW_PASSWORD}!`);
    expect(mismatch.status).toBe(400);
    expect((await fetch(second)).status).toBe(200);

    await server.dataSource
      .getRepository(AccountRecord)
      .update({ email: someone.email }, { passwordResetExpiresAt: new Date(Date.now() - 1000) });
    expect((await fetch(second)).status).toBe(410);
    expect((await setPassword(second, NEW_PASSWORD)).status).toBe(410);
  });

  it('voids an email change whoever knew the old password asked for', async () => {
    const someone = await member('developer');
    // Someone with the password sends the account to their own address…
    const theirs = `taker${nextPerson()}@elsewhere.example`;
    expectStatus(
      await someone.api.user.changeEmail({ body: { email: theirs, current_password: PASSWORD } }),
      202,
    );
    const mail = await catcher.waitFor(theirs);
    const token = /email-change\?token=([\w-]+)/.exec(mail.text ?? '')?.[1];
    expect(token).toBeDefined();
    // …and the owner resets the password before they confirm it.
    await askForLink(someone.email);
    expect((await setPassword(await linkMailedTo(someone.email), NEW_PASSWORD)).status).toBe(200);

    const confirmed = await fetch(`${server.url}/email-change`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: server.url },
      body: new URLSearchParams({ token: token! }).toString(),
    });
    expect(confirmed.status).toBe(410);
    expect(
      (expectStatus(await someone.api.user.retrieve(), 200).body as { email: string }).email,
    ).toBe(someone.email);
  });

  it('refuses a form sent from another site', async () => {
    const res = await fetch(`${server.url}/password-reset`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        origin: 'https://evil.example',
      },
      body: new URLSearchParams({ email: 'head@harbour.example' }).toString(),
    });
    expect(res.status).toBe(403);
  });
});

describe('password reset without mail (no SMTP_URL)', () => {
  it('is not offered, and its page says to ask an admin', async () => {
    const plain = await startServer();
    try {
      const res = await fetch(`${plain.url}/password-reset`);
      expect(res.status).toBe(404);
      expect(await res.text()).toContain('Ask an admin of your organization');
      const posted = await fetch(`${plain.url}/password-reset`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: plain.url },
        body: 'email=head%40harbour.example',
      });
      expect(posted.status).toBe(404);
    } finally {
      await plain.close();
    }
  });
});
