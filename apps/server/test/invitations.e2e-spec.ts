/**
 * Invitations and the calling member (`/v1/user`): an invitation's one-time link makes one member
 * through its HTML page, every member change is audited, and a member changes their own password.
 * Roles and the members API are members.e2e-spec's.
 */
import { randomBytes } from 'node:crypto';
import type { Role } from '@platform/contract';
import { expectStatus, typedClient } from './support/api';
import { formAction } from './support/oauth';
import {
  asOperator,
  member,
  nextPerson,
  oauthToken,
  orgId,
  PASSWORD,
  server,
  setUpRiverside,
} from './support/riverside';

setUpRiverside();

describe('invitations', () => {
  async function invite(
    email: string,
    role: Role = 'developer',
    extraHeaders: Record<string, string> = {},
  ) {
    return asOperator().invitations.create({ body: { email, role }, extraHeaders });
  }

  /** A new invitation (201), with its one-time `accept_url` (this server sends no mail). */
  async function invited(email: string, role?: Role) {
    const body = expectStatus(await invite(email, role), 201).body;
    expect(body.delivery).toBe('link');
    return { ...body, accept_url: body.accept_url! };
  }

  /** Submits the accept form the way the browser would, from the page the link opens. */
  async function acceptThroughPage(
    acceptUrl: string,
    form: Record<string, string>,
    origin: string = server.url,
  ) {
    const page = await fetch(acceptUrl);
    const html = await page.text();
    const token = /name="token" value="([^"]+)"/.exec(html)?.[1] ?? '';
    const res = await fetch(new URL(formAction(html, '/invitations/accept'), server.url), {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin },
      body: new URLSearchParams({ token, ...form }).toString(),
    });
    return { page, html, res, body: await res.text() };
  }

  /** The audit events about `targetId`, oldest first. */
  async function audit(targetId: string) {
    const res = await asOperator().auditEvents.list({
      query: { target_id: targetId, sort: 'created_at', per_page: 100 },
    });
    return expectStatus(res, 200).body.data;
  }

  it('creates an invitation with a one-time accept_url (7 days), lists it without the secret, and an Idempotency-Key retry does not show the link twice (409)', async () => {
    const key = randomBytes(8).toString('hex');
    const res = expectStatus(
      await invite('newcomer@riverside.example', 'developer', { 'Idempotency-Key': key }),
      201,
    );
    expect(res.body).toMatchObject({
      object: 'invitation',
      email: 'newcomer@riverside.example',
      role: 'developer',
    });
    expect(res.body.id).toMatch(/^inv_[0-9A-HJKMNP-TV-Z]{26}$/);
    const days = (Date.parse(res.body.expires_at) - Date.parse(res.body.created_at)) / 86_400_000;
    expect(days).toBeCloseTo(7, 3);
    expect(res.body.delivery).toBe('link');
    const url = new URL(res.body.accept_url!);
    expect(`${url.origin}${url.pathname}`).toBe(`${server.url}/invitations/accept`);
    const secret = url.searchParams.get('token')!;
    expect(secret.length).toBeGreaterThanOrEqual(40);

    const list = expectStatus(await asOperator().invitations.list(), 200);
    const listed = list.body.data.find((i) => i.id === res.body.id);
    expect(listed).toBeDefined();
    expect(listed).not.toHaveProperty('accept_url');
    expect(JSON.stringify(list.body)).not.toContain(secret);
    const one = await asOperator().invitations.retrieve({ params: { id: res.body.id } });
    expect(one.status).toBe(200);
    expect(JSON.stringify(one.body)).not.toContain(secret);
    // Only a hash is stored.
    const rows: { token_hash: string }[] = await server.dataSource.query(
      'SELECT token_hash FROM invitations',
    );
    expect(JSON.stringify(rows)).not.toContain(secret);

    const replay = await invite('newcomer@riverside.example', 'developer', {
      'Idempotency-Key': key,
    });
    expect(replay.status).toBe(409);
    expect(JSON.stringify(replay.body)).not.toContain(secret);
  });

  it('resends a pending invitation with a new link for another 7 days; the old link stops working, and an ended one is a 409', async () => {
    const created = await invited(`again${nextPerson()}@riverside.example`);
    const resent = expectStatus(
      await asOperator().invitations.resend({ params: { id: created.id } }),
      200,
    ).body;
    expect(resent).toMatchObject({ id: created.id, delivery: 'link' });
    expect(resent.accept_url).not.toBe(created.accept_url);
    expect(Date.parse(resent.expires_at)).toBeGreaterThanOrEqual(Date.parse(created.expires_at));
    expect((await fetch(created.accept_url)).status).toBe(404);
    expect((await fetch(resent.accept_url!)).status).toBe(200);
    const audit = await asOperator().auditEvents.list({
      query: { action: 'invitation.resent', target_id: created.id },
    });
    expect(expectStatus(audit, 200).body.data).toHaveLength(1);
    expect(JSON.stringify(audit.body)).not.toContain(new URL(resent.accept_url!).search);

    await asOperator().invitations.delete({ params: { id: created.id } });
    const ended = await asOperator().invitations.resend({ params: { id: created.id } });
    expect(expectStatus(ended, 409).body.detail).toContain('invite the address again');
  });

  it('refuses inviting an email that is already a member (409 naming email)', async () => {
    const existing = await member('viewer');
    const res = await invite(existing.email.toUpperCase());
    expect(expectStatus(res, 409).body.detail).toContain('already a member');
  });

  it("an address with an account elsewhere joins with that account's password: a second membership, the first untouched, each removable alone", async () => {
    const other = (await server.createOrganization({ name: 'Other Place' })).id;
    const email = `taken${nextPerson()}@elsewhere.example`;
    const elsewhere = await server.createUser(other, email, PASSWORD, { role: 'developer' });
    const created = await invited(email, 'viewer');

    // The page is the one a new address gets: whoever holds the link learns nothing from it.
    const fresh = await invited(`fresh${nextPerson()}@elsewhere.example`, 'viewer');
    const pageOf = async (url: string) => {
      const html = await (await fetch(url)).text();
      const token = new URL(url).searchParams.get('token')!;
      return html.replaceAll(token, 'TOKEN').replace(/<strong>[^<]*<\/strong>/, 'EMAIL');
    };
    expect(await pageOf(created.accept_url)).toBe(await pageOf(fresh.accept_url));

    // Holding the link is not enough: the account's password is.
    const guess = { password: `${PASSWORD}-not`, password_confirmation: `${PASSWORD}-not` };
    const wrong = await acceptThroughPage(created.accept_url, guess);
    expect(wrong.res.status).toBe(400);
    expect(wrong.body).toContain('already has an account, and that is not its password');
    const before = await asOperator().members.list({ query: { per_page: 100 } });
    expect(expectStatus(before, 200).body.data.map((m) => m.email)).not.toContain(email);

    const joined = await acceptThroughPage(created.accept_url, {
      password: PASSWORD,
      password_confirmation: PASSWORD,
    });
    expect(joined.res.status).toBe(303);
    const mine = expectStatus(await asOperator().members.list({ query: { per_page: 100 } }), 200);
    const here = mine.body.data.find((m) => m.email === email)!;
    expect(here).toMatchObject({ role: 'viewer' });
    expect(here.id).not.toBe(elsewhere.id);

    // One person, two memberships: each token is one membership's, with its role, and a token
    // other than their portal session learns of no other organization (memberships.e2e-spec).
    const { token } = await server.createToken(orgId, ['all'], { userId: here.id });
    const me = expectStatus(await typedClient(server, token).user.retrieve(), 200).body;
    expect(me).toMatchObject({ id: here.id, role: 'viewer', organization_id: orgId });
    expect(me.memberships.map((m) => [m.organization_id, m.role, m.member_id])).toEqual([
      [orgId, 'viewer', here.id],
    ]);

    const { token: theirs } = await server.createToken(other, ['all'], { userId: elsewhere.id });
    const there = expectStatus(await typedClient(server, theirs).user.retrieve(), 200).body;
    expect(there.account_id).toBe(me.account_id);

    // Removing one membership leaves the other working.
    expectStatus(await asOperator().members.delete({ params: { id: here.id } }), 200);
    expect((await typedClient(server, token).user.retrieve()).status).toBe(401);
    const still = expectStatus(await typedClient(server, theirs).user.retrieve(), 200).body;
    expect(still.memberships.map((m) => m.organization_id)).toEqual([other]);
  });

  it("guesses an account's password on the invitation page no faster than on the sign-in page (429 after 10 a minute)", async () => {
    const other = (await server.createOrganization({ name: 'Guessed Place' })).id;
    const email = `guessed${nextPerson()}@elsewhere.example`;
    await server.createUser(other, email, PASSWORD, { role: 'viewer' });
    const created = await invited(email, 'admin');
    const guess = (password: string) =>
      acceptThroughPage(created.accept_url, { password, password_confirmation: password });
    for (let i = 0; i < 10; i += 1)
      expect((await guess(`wrong guess number ${i}`)).res.status).toBe(400);
    // The right password too, until the minute is over: the limit comes before the check.
    const limited = await guess(PASSWORD);
    expect(limited.res.status).toBe(429);
    expect(Number(limited.res.headers.get('retry-after'))).toBeGreaterThan(0);
    const mine = expectStatus(await asOperator().members.list({ query: { per_page: 100 } }), 200);
    expect(mine.body.data.map((m) => m.email)).not.toContain(email);
  });

  it('refuses (403) inviting with a role whose scopes the calling token lacks', async () => {
    const { token } = await server.createToken(orgId, ['members:write']);
    const res = await typedClient(server, token).invitations.create({
      body: { email: 'sneaky@riverside.example', role: 'admin' },
    });
    expect(expectStatus(res, 403).body.code).toBe('forbidden');
  });

  it('the invitee opens the link, sets a password on the HTML page, becomes a member with the role, lands on the portal, and can sign in; the link then works no more', async () => {
    const email = `invitee${nextPerson()}@riverside.example`;
    const created = await invited(email, 'viewer');
    const acceptUrl = created.accept_url;

    const { page, html, res, body } = await acceptThroughPage(acceptUrl, {
      name: 'Ivy Invitee',
      password: PASSWORD,
      password_confirmation: PASSWORD,
    });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('cache-control')).toBe('no-store');
    expect(html).toContain(email);
    // Accessible: each field has a label, in the order they are filled in.
    const ids = [...html.matchAll(/<input id="([^"]+)"/g)].map((m) => m[1]);
    expect(ids).toEqual(['name', 'password', 'password_confirmation']);
    for (const id of ids) expect(html).toContain(`<label for="${id}">`);
    expect(page.headers.get('content-security-policy')).toContain("form-action 'self'");

    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe(`${server.url}/portal/`);
    expect(body).not.toContain(PASSWORD);

    const members = await asOperator().members.list({ query: { role: 'viewer', per_page: 100 } });
    const joined = expectStatus(members, 200).body.data.find((m) => m.email === email);
    expect(joined).toMatchObject({ role: 'viewer', name: 'Ivy Invitee' });
    const pending = expectStatus(await asOperator().invitations.list(), 200);
    expect(pending.body.data.map((i) => i.id)).not.toContain(created.id);

    // Signs in through the OAuth pages with the password they chose.
    const { accessToken } = await oauthToken({ email }, 'students:read');
    const me = await typedClient(server, accessToken).user.retrieve();
    expect(me.body).toMatchObject({ id: joined!.id, email, role: 'viewer', name: 'Ivy Invitee' });

    // One-time: the link is spent, and says so.
    const again = await fetch(acceptUrl);
    expect(again.status).toBe(410);
    expect(await again.text()).toMatch(/already been used/);
    const token = new URL(acceptUrl).searchParams.get('token')!;
    const replay = await fetch(`${server.url}/invitations/accept`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: server.url },
      body: new URLSearchParams({
        token,
        password: 'another long password',
        password_confirmation: 'another long password',
      }).toString(),
    });
    expect(replay.status).toBe(410);
    const count: { n: string | number }[] = await server.dataSource.query(
      `SELECT COUNT(*) AS n FROM users WHERE email = '${email}'`,
    );
    expect(Number(count[0]!.n)).toBe(1);
  });

  it('accepts the form as Chromium sends it under the no-referrer policy (Origin: null, Sec-Fetch-Site: same-origin), and refuses Origin: null from anywhere else (403)', async () => {
    const email = `browser${nextPerson()}@riverside.example`;
    const created = await invited(email);
    const token = new URL(created.accept_url).searchParams.get('token')!;
    const post = (headers: Record<string, string>) =>
      fetch(`${server.url}/invitations/accept`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
        body: new URLSearchParams({
          token,
          password: PASSWORD,
          password_confirmation: PASSWORD,
        }).toString(),
      });
    expect((await post({ origin: 'null', 'sec-fetch-site': 'cross-site' })).status).toBe(403);
    expect((await post({ origin: 'null' })).status).toBe(403);
    const accepted = await post({ origin: 'null', 'sec-fetch-site': 'same-origin' });
    expect(accepted.status).toBe(303);
    expect(accepted.headers.get('location')).toBe(`${server.url}/portal/`);
  });

  it('the accept form refuses a post from another site (403), a short password and mismatched passwords (400, nothing spent)', async () => {
    const email = `careful${nextPerson()}@riverside.example`;
    const created = await invited(email);
    const cross = await acceptThroughPage(
      created.accept_url,
      { password: PASSWORD, password_confirmation: PASSWORD },
      'https://evil.example',
    );
    expect(cross.res.status).toBe(403);
    const short = await acceptThroughPage(created.accept_url, {
      password: 'short',
      password_confirmation: 'short',
    });
    expect(short.res.status).toBe(400);
    expect(short.body).toMatch(/at least|12 to 1024/);
    expect(short.body).toContain('role="alert"');
    const mismatch = await acceptThroughPage(created.accept_url, {
      password: PASSWORD,
      password_confirmation: `${PASSWORD}!`,
    });
    expect(mismatch.res.status).toBe(400);
    // Still usable.
    const ok = await acceptThroughPage(created.accept_url, {
      password: PASSWORD,
      password_confirmation: PASSWORD,
    });
    expect(ok.res.status).toBe(303);
  });

  it('records every member change in the audit log: invitation created, accepted (by the invitee, from the link), member added, role changed, renamed, removed, invitation revoked, password changed', async () => {
    const invitation = await invited('audited@riverside.example', 'developer');
    const { res } = await acceptThroughPage(invitation.accept_url, {
      password: PASSWORD,
      password_confirmation: PASSWORD,
      name: 'Audrey',
    });
    expect(res.status).toBe(303);
    const invitationLog = await audit(invitation.id);
    expect(invitationLog.map((e) => e.action)).toEqual([
      'invitation.created',
      'invitation.accepted',
    ]);
    expect(JSON.stringify(invitationLog)).not.toContain(
      new URL(invitation.accept_url).searchParams.get('token'),
    );
    const list = await asOperator().members.list({
      query: { role: 'developer', sort: '-created_at', per_page: 1 },
    });
    const userId = expectStatus(list, 200).body.data[0]!.id;
    expect(invitationLog[1]!.actor).toEqual(
      expect.objectContaining({
        type: 'invitation',
        credential_id: invitation.id,
        user_id: userId,
      }),
    );

    const byId = { params: { id: userId } };
    expect((await asOperator().members.update({ ...byId, body: { role: 'viewer' } })).status).toBe(
      200,
    );
    const renamed = await asOperator().members.update({ ...byId, body: { name: 'Audrey H.' } });
    expect(renamed.status).toBe(200);
    expect((await asOperator().members.delete(byId)).status).toBe(200);
    const memberLog = await audit(userId);
    expect(memberLog.map((e) => [e.action, e.changes])).toEqual([
      ['member.added', { email: 'audited@riverside.example', role: 'developer' }],
      ['member.role_changed', { role: ['developer', 'viewer'] }],
      ['member.updated', { name: ['Audrey', 'Audrey H.'] }],
      [
        'member.removed',
        {
          email: 'audited@riverside.example',
          role: 'viewer',
          // What the removal stopped: nothing of theirs was left here.
          revoked: {
            personal_access_tokens: [],
            oauth_clients: [],
            authorized_apps: [],
            webhook_endpoints: [],
            invitations: [],
            sessions: 0,
          },
        },
      ],
    ]);

    const revoked = await invited('never@riverside.example', 'viewer');
    await asOperator().invitations.delete({ params: { id: revoked.id } });
    expect((await audit(revoked.id)).map((e) => e.action)).toEqual([
      'invitation.created',
      'invitation.revoked',
    ]);

    const m = await member('viewer', ['students:read']);
    const changed = await m.api.user.changePassword({
      body: { current_password: PASSWORD, new_password: 'a brand new long password' },
    });
    expect(changed.status).toBe(204);
    const passwordLog = await audit(m.id);
    expect(passwordLog.map((e) => e.action)).toEqual(['user.password_changed']);
    expect(passwordLog[0]!.actor.user_id).toBe(m.id);
    expect(JSON.stringify(passwordLog)).not.toContain('a brand new long password');
  });

  it('a revoked invitation no longer works (410) and leaves the pending list; an unknown link is a 404 page', async () => {
    const created = await invited(`withdrawn${nextPerson()}@riverside.example`);
    const revoked = await asOperator().invitations.delete({ params: { id: created.id } });
    expect(revoked.body).toEqual({ id: created.id, object: 'invitation', deleted: true });
    const res = await fetch(created.accept_url);
    expect(res.status).toBe(410);
    expect(await res.text()).toMatch(/withdrawn/);
    const pending = expectStatus(await asOperator().invitations.list(), 200);
    expect(pending.body.data.map((i) => i.id)).not.toContain(created.id);
    expect((await fetch(`${server.url}/invitations/accept?token=invt_nope`)).status).toBe(404);
  });
});

describe('/v1/user', () => {
  it('answers the calling member for an owned PAT; a token acting for no member is 403 saying so', async () => {
    const m = await member('developer', ['students:read']);
    const me = await m.api.user.retrieve();
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({
      id: m.id,
      object: 'member',
      email: m.email,
      role: 'developer',
      organization_id: orgId,
    });
    const none = expectStatus(await asOperator().user.retrieve(), 403);
    expect(none.body.code).toBe('forbidden');
    expect(none.body.detail).toMatch(/acts for no member/);
    expect((await typedClient(server).user.retrieve()).status).toBe(401);
  });

  it('changes the password with the current one (204), refuses a wrong current one (400) and a short new one (400); sign-in then takes the new one', async () => {
    const m = await member('viewer', ['students:read']);
    const wrong = await m.api.user.changePassword({
      body: {
        current_password: 'not the password at all',
        new_password: 'a brand new long password',
      },
    });
    expect(expectStatus(wrong, 400).body.errors?.[0]?.path).toBe('body.current_password');
    const short = await m.api.user.changePassword({
      body: { current_password: PASSWORD, new_password: 'short' },
    });
    expect(expectStatus(short, 400).body.errors?.[0]?.path).toBe('body.new_password');

    const changed = await m.api.user.changePassword({
      body: { current_password: PASSWORD, new_password: 'a brand new long password' },
    });
    expect(changed.status).toBe(204);
    // No body: the typed client hands over a body without a content type as a Blob.
    expect(await (changed.body as unknown as Blob).text()).toBe('');
    const { accessToken } = await oauthToken(
      { email: m.email, password: 'a brand new long password' },
      'students:read',
    );
    const me = await typedClient(server, accessToken).user.retrieve();
    expect(expectStatus(me, 200).body.id).toBe(m.id);
    await expect(oauthToken({ email: m.email }, 'students:read')).rejects.toThrow(
      /consent page: 401/,
    );

    const noUser = await asOperator().user.changePassword({
      body: { current_password: PASSWORD, new_password: 'a brand new long password' },
    });
    expect(noUser.status).toBe(403);
  });
});
