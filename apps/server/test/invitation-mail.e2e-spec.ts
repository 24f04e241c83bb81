/**
 * Invitations by email through a real SMTP server on loopback (smtp-server): the link goes to the
 * invitee only, the mail names the organization and the inviter, and an outbox keeps an
 * invitation made while the mail server is down until it is back.
 */
import type { InvitationWithSecretSchema } from '@platform/contract';
import type { z } from 'zod';

type InvitationWithSecret = z.infer<typeof InvitationWithSecretSchema>;
import { formAction } from './support/oauth';
import { type MailCatcher, startMailCatcher } from './support/mail-catcher';
import { rawCall, startServer, type TestServer } from './support/server';

const PASSWORD = 'correct horse battery staple';

describe('invitations by email (SMTP_URL)', () => {
  let catcher: MailCatcher;
  let server: TestServer;
  let orgId: string;
  let adminToken: string;

  beforeAll(async () => {
    catcher = await startMailCatcher();
    server = await startServer({
      SMTP_URL: catcher.url,
      MAIL_FROM: 'Riverside via Platform <no-reply@platform.test>',
      MAIL_RETRY_SCHEDULE: '200ms,200ms,200ms,200ms,200ms',
    });
    orgId = (await server.createOrganization({ name: 'Riverside School' })).id;
    const head = await server.createUser(orgId, 'head@riverside.example', PASSWORD);
    await server.dataSource.query(
      `UPDATE users SET name = 'Dana Head' WHERE email = 'head@riverside.example'`,
    );
    ({ token: adminToken } = await server.createToken(orgId, ['all'], { userId: head.id }));
  });
  afterAll(async () => {
    await server?.close();
    await catcher?.close();
  });

  const invite = (email: string) =>
    rawCall<InvitationWithSecret>(server, '/v1/invitations', {
      token: adminToken,
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ email, role: 'developer' }),
    });
  const linkIn = (text: string) => /https?:\/\/\S+\/invitations\/accept\?token=\S+/.exec(text)?.[0];

  it('mails the link to the invitee and never shows it to the admin', async () => {
    const res = await invite('new.teacher@riverside.example');
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ delivery: 'email', accept_url: null });
    expect(JSON.stringify(res.body)).not.toContain('token=');

    const mail = await catcher.waitFor('new.teacher@riverside.example');
    expect(mail.from?.text).toContain('no-reply@platform.test');
    expect(mail.subject).toBe('Dana Head invited you to Riverside School');
    expect(mail.text).toContain('as developer');
    const link = linkIn(mail.text ?? '');
    expect(link).toBeDefined();
    expect(mail.html).toContain('Riverside School');

    // The link in the mail works: the invitee sets a password and is a member.
    const page = await fetch(link!);
    const html = await page.text();
    const token = /name="token" value="([^"]+)"/.exec(html)?.[1] ?? '';
    const posted = await fetch(new URL(formAction(html, '/invitations/accept'), server.url), {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: server.url },
      body: new URLSearchParams({
        token,
        password: PASSWORD,
        password_confirmation: PASSWORD,
      }).toString(),
    });
    expect(posted.status).toBeLessThan(400);
    const members = await rawCall<{ data: { email: string }[] }>(server, '/v1/members', {
      token: adminToken,
    });
    expect(members.body.data.map((m) => m.email)).toContain('new.teacher@riverside.example');

    // Sent: the stored copy keeps no link.
    const [stored] = await server.dataSource.query(
      `SELECT text, html, sent_at FROM mail_outbox WHERE recipient = 'new.teacher@riverside.example'`,
    );
    expect(stored).toMatchObject({ text: '', html: '' });
    expect(stored.sent_at).not.toBeNull();
  });

  it('resends a pending invitation with a new link; the old one stops working', async () => {
    const created = await invite('second.try@riverside.example');
    const first = linkIn((await catcher.waitFor('second.try@riverside.example')).text ?? '')!;
    const resent = await rawCall<InvitationWithSecret>(
      server,
      `/v1/invitations/${created.body.id}/resend`,
      { token: adminToken, method: 'POST' },
    );
    expect(resent.status).toBe(200);
    expect(resent.body).toMatchObject({ id: created.body.id, delivery: 'email', accept_url: null });
    const deadline = Date.now() + 10_000;
    let mails = catcher.messages;
    for (;;) {
      mails = catcher.messages.filter((m) =>
        [m.to ?? []].flat().some((a) => a.text.includes('second.try@riverside.example')),
      );
      if (mails.length === 2 || Date.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(mails).toHaveLength(2);
    const second = linkIn(mails[1]!.text ?? '')!;
    expect(second).not.toBe(first);
    expect((await fetch(first)).status).toBe(404);
    expect((await fetch(second)).status).toBe(200);
  });

  it('keeps an invitation made while the mail server is down, and sends it once it is back', async () => {
    const port = catcher.port;
    await catcher.close();
    const res = await invite('during.outage@riverside.example');
    expect(res.status).toBe(201);
    // Let a few attempts fail against the closed port.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const [pending] = await server.dataSource.query(
      `SELECT attempts, sent_at, last_error FROM mail_outbox WHERE recipient = 'during.outage@riverside.example'`,
    );
    expect(Number(pending.attempts)).toBeGreaterThan(0);
    expect(pending.sent_at).toBeNull();
    expect(pending.last_error).toBeTruthy();

    catcher = await startMailCatcher(port);
    const mail = await catcher.waitFor('during.outage@riverside.example', 15_000);
    expect(linkIn(mail.text ?? '')).toBeDefined();
  });
});
