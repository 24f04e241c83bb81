/**
 * Changing one's email (issue 46), through a real SMTP server on loopback: the new address is
 * confirmed by a link mailed to it before it takes effect, the old address is told, and the
 * answer never says whether the new address already has an account.
 */
import { EMAIL_CHANGE_MAILS_PER_ADDRESS } from '@platform/contract';
import { AccountRecord } from '../src/oauth/entities';
import { expectStatus, typedClient } from './support/api';
import { type MailCatcher, startMailCatcher } from './support/mail-catcher';
import {
  asOperator,
  member,
  nextPerson,
  orgId,
  PASSWORD,
  portalSignIn,
  server,
  setUpOffboarding,
} from './support/offboarding';
import { startServer } from './support/server';

let catcher: MailCatcher;
beforeAll(async () => {
  catcher = await startMailCatcher();
});
setUpOffboarding(() => ({ SMTP_URL: catcher.url }));
afterAll(() => catcher?.close());

const newAddress = () => `moved${nextPerson()}@harbour.example`;

async function confirmLinkMailedTo(email: string): Promise<string> {
  const mail = await catcher.waitFor(email);
  const link = /https?:\/\/\S+\/email-change\?token=[\w-]+/.exec(mail.text ?? '')?.[0];
  if (!link) throw new Error(`no confirmation link in: ${mail.text}`);
  return link;
}

function confirm(link: string, origin = server.url) {
  const token = new URL(link).searchParams.get('token')!;
  return fetch(`${server.url}/email-change`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin },
    body: new URLSearchParams({ token }).toString(),
  });
}

const emailOf = async (api: ReturnType<typeof typedClient>) =>
  (expectStatus(await api.user.retrieve(), 200).body as { email: string }).email;

describe('changing the email', () => {
  it('takes effect only once the new address opens its link; the old one is told', async () => {
    const someone = await member('developer');
    const next = newAddress();
    const asked = await someone.api.user.changeEmail({
      body: { email: next.toUpperCase(), current_password: PASSWORD },
    });
    expect(asked.status).toBe(202);
    expect(asked.body).toMatchObject({
      object: 'email_change',
      email: next,
      delivery: 'email',
      confirm_url: null,
    });

    const link = await confirmLinkMailedTo(next);
    const page = await fetch(link);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain(next);
    expect(html).toContain('Confirm my new email');
    // Opening the link (a mail scanner does) changes nothing; the button does.
    expect(await emailOf(someone.api)).toBe(someone.email);

    const confirmed = await confirm(link);
    expect(confirmed.status).toBe(200);
    expect(await confirmed.text()).toContain(`You sign in with ${next} from now on`);
    expect(await emailOf(someone.api)).toBe(next);
    const notice = await catcher.waitFor(someone.email);
    expect(notice.subject).toBe('Your Platform email was changed');
    expect(notice.text).toContain(next);

    // Signing in takes the new address, not the old one.
    await expect(portalSignIn(next)).resolves.toHaveProperty('token');
    await expect(portalSignIn(someone.email)).rejects.toThrow('no code');
    // The link worked once.
    expect((await fetch(link)).status).toBe(410);
    expect((await confirm(link)).status).toBe(410);

    const log = await asOperator().auditEvents.list({
      query: { action: 'user.email_changed', user_id: someone.id },
    });
    expect(expectStatus(log, 200).body.data).toMatchObject([
      { actor: { type: 'sign_in' }, changes: { email: [someone.email, next] } },
    ]);
  });

  it('answers alike for an address that already has an account, and tells only its holder', async () => {
    const someone = await member('viewer');
    const other = await member('viewer');
    const free = newAddress();
    const toTaken = await someone.api.user.changeEmail({
      body: { email: other.email, current_password: PASSWORD },
    });
    const toFree = await someone.api.user.changeEmail({
      body: { email: free, current_password: PASSWORD },
    });
    expect(toTaken.status).toBe(toFree.status);
    expect(Object.keys(toTaken.body as object).sort()).toEqual(
      Object.keys(toFree.body as object).sort(),
    );
    const told = await catcher.waitFor(other.email);
    expect(told.subject).toBe('This address already has a Platform account');
    expect(told.text).not.toMatch(/email-change\?token=/);
    expect(await emailOf(other.api)).toBe(other.email);
    expect(await emailOf(someone.api)).toBe(someone.email);
  });

  it('is voided by a new password: a change asked for with the old one never happens', async () => {
    const someone = await member('viewer');
    const theirs = newAddress();
    expectStatus(
      await someone.api.user.changeEmail({ body: { email: theirs, current_password: PASSWORD } }),
      202,
    );
    const link = await confirmLinkMailedTo(theirs);
    expectStatus(
      await someone.api.user.changePassword({
        body: { current_password: PASSWORD, new_password: 'maple river copper lantern' },
      }),
      204,
    );
    expect((await fetch(link)).status).toBe(410);
    expect((await confirm(link)).status).toBe(410);
    expect(await emailOf(someone.api)).toBe(someone.email);
  });

  it(`mails one address at most ${EMAIL_CHANGE_MAILS_PER_ADDRESS} times a minute, whoever asks`, async () => {
    const target = newAddress();
    const statuses: number[] = [];
    let retryAfter: string | null = null;
    for (let i = 0; i <= EMAIL_CHANGE_MAILS_PER_ADDRESS; i++) {
      const asker = await member('viewer');
      const res = await asker.api.user.changeEmail({
        body: { email: target, current_password: PASSWORD },
      });
      statuses.push(res.status);
      retryAfter = res.headers.get('retry-after');
    }
    expect(statuses).toEqual([...Array(EMAIL_CHANGE_MAILS_PER_ADDRESS).fill(202), 429]);
    expect(Number(retryAfter)).toBeGreaterThan(0);
    // The same for an address that has an account: its holder gets that many notices at most.
    const holder = await member('viewer');
    const notices: number[] = [];
    for (let i = 0; i <= EMAIL_CHANGE_MAILS_PER_ADDRESS; i++) {
      const res = await (
        await member('viewer')
      ).api.user.changeEmail({
        body: { email: holder.email, current_password: PASSWORD },
      });
      notices.push(res.status);
    }
    expect(notices).toEqual(statuses);
  });

  it('needs the current password, and a new address', async () => {
    const someone = await member('viewer');
    const next = newAddress();
    const wrong = await someone.api.user.changeEmail({
      body: { email: next, current_password: 'not my password at all' },
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body).toMatchObject({ errors: [{ path: 'body.current_password' }] });
    const same = await someone.api.user.changeEmail({
      body: { email: someone.email, current_password: PASSWORD },
    });
    expect(same.status).toBe(400);
    expect(same.body).toMatchObject({ errors: [{ path: 'body.email' }] });
    const log = await asOperator().auditEvents.list({
      query: { action: 'user.password_check_failed', user_id: someone.id },
    });
    expect(expectStatus(log, 200).body.data).toHaveLength(1);
    // Another member's link would have arrived by now; none went to this address.
    const probe = await member('viewer');
    const probeAddress = newAddress();
    await probe.api.user.changeEmail({ body: { email: probeAddress, current_password: PASSWORD } });
    await confirmLinkMailedTo(probeAddress);
    expect(catcher.messages.some((m) => JSON.stringify(m.to).includes(next))).toBe(false);
  });

  it('honours only the newest, unexpired link, and only from its own page', async () => {
    const someone = await member('viewer');
    const first = newAddress();
    const second = newAddress();
    await someone.api.user.changeEmail({ body: { email: first, current_password: PASSWORD } });
    const firstLink = await confirmLinkMailedTo(first);
    await someone.api.user.changeEmail({ body: { email: second, current_password: PASSWORD } });
    const secondLink = await confirmLinkMailedTo(second);
    expect((await confirm(firstLink)).status).toBe(410);
    expect((await confirm(secondLink, 'https://evil.example')).status).toBe(403);

    await server.dataSource
      .getRepository(AccountRecord)
      .update({ email: someone.email }, { emailChangeExpiresAt: new Date(Date.now() - 1000) });
    expect((await fetch(secondLink)).status).toBe(410);
    expect((await confirm(secondLink)).status).toBe(410);
    expect(await emailOf(someone.api)).toBe(someone.email);
  });

  it('refuses an address that got an account meanwhile, changing nothing', async () => {
    const someone = await member('viewer');
    const next = newAddress();
    await someone.api.user.changeEmail({ body: { email: next, current_password: PASSWORD } });
    const link = await confirmLinkMailedTo(next);
    await server.createUser(orgId, next, PASSWORD, { role: 'viewer' });
    const confirmed = await confirm(link);
    expect(confirmed.status).toBe(409);
    expect(await confirmed.text()).toContain('already belongs to a Platform account');
    expect(await emailOf(someone.api)).toBe(someone.email);
  });

  it('voids a password reset link mailed to the old address', async () => {
    const someone = await member('viewer');
    await fetch(`${server.url}/password-reset`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: server.url },
      body: new URLSearchParams({ email: someone.email }).toString(),
    });
    const mail = await catcher.waitFor(someone.email);
    const reset = /https?:\/\/\S+\/password-reset\/new\?token=[\w-]+/.exec(mail.text ?? '')![0];
    expect((await fetch(reset)).status).toBe(200);
    const next = newAddress();
    await someone.api.user.changeEmail({ body: { email: next, current_password: PASSWORD } });
    expect((await confirm(await confirmLinkMailedTo(next))).status).toBe(200);
    expect((await fetch(reset)).status).toBe(410);
  });
});

describe('changing the email without mail (no SMTP_URL)', () => {
  it('answers the link to the member (development), which confirms as by mail', async () => {
    const plain = await startServer();
    try {
      const org = await plain.createOrganization();
      const user = await plain.createUser(org.id, 'solo@plain.example', PASSWORD);
      const { token } = await plain.createToken(org.id, ['all'], { userId: user.id });
      const api = typedClient(plain, token);
      const res = await api.user.changeEmail({
        body: { email: 'elsewhere@plain.example', current_password: PASSWORD },
      });
      expect(res.status).toBe(202);
      const body = res.body as { delivery: string; confirm_url: string };
      expect(body.delivery).toBe('link');
      const confirmUrl = new URL(body.confirm_url);
      expect(confirmUrl.origin).toBe(plain.url);
      const confirmed = await fetch(`${plain.url}/email-change`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: plain.url },
        body: new URLSearchParams({ token: confirmUrl.searchParams.get('token')! }).toString(),
      });
      expect(confirmed.status).toBe(200);
      expect(await emailOf(api)).toBe('elsewhere@plain.example');
      // Nothing queued for a server that sends no mail.
      expect(await plain.dataSource.query('SELECT id FROM mail_outbox')).toEqual([]);
    } finally {
      await plain.close();
    }
  });
});
