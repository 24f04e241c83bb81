/**
 * Offboarding and sessions (issue 31), signing in and out: signing out signs out, password checks
 * are limited and recorded, and sign-in forms check Origin. One regression test per finding, on
 * SQLite and PostgreSQL; offboarding.e2e-spec has the rest of the issue's.
 */
import { createHash } from 'node:crypto';
import { OAuthArtifactRecord } from '../src/oauth/entities';
import { PORTAL_CLIENT_ID } from '../src/oauth/portal-client';
import { Browser, formAction } from '../src/testing';
import { expectStatus, typedClient } from './support/api';
import {
  asksForPassword,
  asOperator,
  member,
  PASSWORD,
  portalSignIn,
  server,
  setUpOffboarding,
} from './support/offboarding';
import { rawCall } from './support/server';

setUpOffboarding();

describe('4. signing out signs out; a password change ends the other sessions', () => {
  it('ends the sign-in session: the next sign-in asks for the password', async () => {
    const someone = await member('viewer');
    const { token, browser } = await portalSignIn(someone.email);
    expect(await asksForPassword(browser)).toBe(false);

    const end = await browser.follow(
      `/oauth/session/end?${new URLSearchParams({
        client_id: PORTAL_CLIENT_ID,
        post_logout_redirect_uri: `${server.url}/portal/`,
      }).toString()}`,
    );
    expect(end.body).toContain('Sign out of Platform');
    const confirmAt = /<form id="op.logoutForm" method="post" action="([^"]+)"/.exec(end.body)![1]!;
    const confirmed = await browser.request(confirmAt, {
      method: 'POST',
      form: {
        xsrf: /name="xsrf" value="([^"]+)"/.exec(end.body)![1]!,
        logout: 'yes',
      },
    });
    expect(confirmed.headers.get('location')).toBe(`${server.url}/portal/`);

    expect(await asksForPassword(browser)).toBe(true);
    const log = await asOperator().auditEvents.list({
      query: { action: 'user.signed_out', user_id: someone.id },
    });
    expect(expectStatus(log, 200).body.data).toHaveLength(1);
    // The portal revokes its token itself (RFC 7009); that is recorded too.
    await fetch(`${server.url}/oauth/revoke`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token, client_id: PORTAL_CLIENT_ID }),
    });
    const revoked = await asOperator().auditEvents.list({
      query: { action: 'oauth_token.revoked', user_id: someone.id },
    });
    expect(expectStatus(revoked, 200).body.data).toHaveLength(1);
  });

  it('a password change ends every other session and portal token, and keeps the caller’s', async () => {
    const someone = await member('developer');
    const elsewhere = await portalSignIn(someone.email);
    const here = await portalSignIn(someone.email);
    const changed = await typedClient(server, here.token).user.changePassword({
      body: { current_password: PASSWORD, new_password: 'maple river copper lantern' },
    });
    expect(changed.status).toBe(204);

    expect((await typedClient(server, elsewhere.token).students.list()).status).toBe(401);
    expect(await asksForPassword(elsewhere.browser)).toBe(true);
    expect((await typedClient(server, here.token).students.list()).status).toBe(200);
    // The caller's browser keeps its portal grant (the session's record of approving the portal).
    const portalGrants = await server.dataSource
      .getRepository(OAuthArtifactRecord)
      .findBy({ kind: 'Grant', clientId: PORTAL_CLIENT_ID });
    expect(portalGrants.filter((g) => g.payload.includes(someone.id))).toHaveLength(1);
    // A personal access token is not a session: it keeps working.
    expect((await someone.api.students.list()).status).toBe(200);
  });
});

describe('5. current-password checks are limited like sign-in, and recorded', () => {
  it('answers 429 after 10 checks in a minute, and each wrong one is in the audit log', async () => {
    const someone = await member('viewer');
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) {
      const res = await someone.api.user.changePassword({
        body: { current_password: `guess number ${i}`, new_password: 'maple river copper lantern' },
      });
      statuses.push(res.status);
    }
    expect(statuses).toEqual([...Array(10).fill(400), 429]);
    const log = await asOperator().auditEvents.list({
      query: { action: 'user.password_check_failed', user_id: someone.id },
    });
    expect(expectStatus(log, 200).body.meta.total).toBe(10);
  });
});

describe('6. passwords follow NIST SP 800-63B', () => {
  it.each([
    ['twelve spaces', () => ' '.repeat(12), 'must not be only spaces'],
    ['a leaked password', () => 'qwertyuiop123', 'is too easy to guess'],
    ['their own email', (email: string) => email, 'is too easy to guess'],
  ])('refuses %s as a new password', async (_what, next, message) => {
    const someone = await member('viewer');
    const res = await someone.api.user.changePassword({
      body: { current_password: PASSWORD, new_password: next(someone.email) },
    });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      code: 'validation_error',
      errors: [{ path: 'body.new_password', code: 'weak_password' }],
    });
    expect((res.body as { errors: { message: string }[] }).errors[0]!.message).toContain(message);
  });
});

describe('7. every state-changing sign-in form checks Origin', () => {
  it('refuses a login form posted from another site', async () => {
    const someone = await member('viewer');
    const browser = new Browser(server.url);
    const url = new URL('/oauth/authorize', server.url);
    url.search = new URLSearchParams({
      response_type: 'code',
      client_id: PORTAL_CLIENT_ID,
      redirect_uri: `${server.url}/portal/callback`,
      scope: 'students:read',
      state: 'x',
      code_challenge: createHash('sha256').update('v'.repeat(43)).digest('base64url'),
      code_challenge_method: 'S256',
    }).toString();
    const login = await browser.follow(url.toString());
    const forged = await browser.request(formAction(login.body, '/login'), {
      method: 'POST',
      form: { email: someone.email, password: PASSWORD },
      headers: { origin: 'https://evil.example' },
    });
    expect(forged.status).toBe(403);
    expect(forged.body).toContain('can only be sent from its own page');
  });

  it('lists what removing a member would stop', async () => {
    const developer = await member('developer');
    const endpoint = expectStatus(
      await developer.api.webhookEndpoints.create({
        body: { url: 'https://127.0.0.1:9/listed', events: ['student.created'] },
      }),
      201,
    ).body;
    const held = expectStatus(
      await asOperator().members.credentials({ params: { id: developer.id } }),
      200,
    ).body;
    expect(held.personal_access_tokens).toHaveLength(1);
    expect(held.webhook_endpoints).toEqual([{ id: endpoint.id, url: endpoint.url }]);
    expect((await rawCall(server, `/v1/members/${developer.id}/credentials`)).status).toBe(401);
  });
});
