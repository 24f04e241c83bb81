/**
 * One person, several organizations (decision 34): an account signs in once and chooses the
 * organization; each session and token is one membership's, with that membership's role.
 */
import { expectStatus, typedClient } from './support/api';
import { AccountRecord } from '../src/oauth/entities';
import { PORTAL_CLIENT_ID } from '../src/oauth/portal-client';
import { Browser, formAction } from '../src/testing';
import {
  asOperator,
  nextPerson,
  orgId,
  PASSWORD,
  portalSignIn,
  remove,
  server,
  setUpOffboarding,
} from './support/offboarding';

setUpOffboarding();

describe('memberships', () => {
  it('an account in two organizations chooses one after its password; the portal token is that membership', async () => {
    const other = (await server.createOrganization({ name: 'Second School' })).id;
    const email = `two${nextPerson()}@schools.example`;
    const first = await server.createUser(orgId, email, PASSWORD, { role: 'viewer' });
    const second = await server.createUser(other, email, PASSWORD, { role: 'admin' });

    const chose = await portalSignIn(email, new Browser(server.url), PASSWORD, other);
    expect(chose.choicePage).toContain('Second School (admin)');
    expect(chose.choicePage).toContain('(viewer)');
    expect(chose.choicePage).not.toContain(PASSWORD);
    const me = expectStatus(await typedClient(server, chose.token).user.retrieve(), 200).body;
    expect(me).toMatchObject({ id: second.id, role: 'admin', organization_id: other });
    expect(me.memberships.map((m) => m.member_id)).toEqual([first.id, second.id]);
    // Their own portal session lists both; a token an app or integration holds, only its own.
    const { token } = await server.createToken(other, ['students:read'], { userId: second.id });
    const app = expectStatus(await typedClient(server, token).user.retrieve(), 200).body;
    expect(app.memberships.map((m) => m.member_id)).toEqual([second.id]);
    expect(JSON.stringify(app)).not.toContain(orgId);

    const again = await portalSignIn(email, new Browser(server.url), PASSWORD, orgId);
    const them = expectStatus(await typedClient(server, again.token).user.retrieve(), 200).body;
    expect(them).toMatchObject({ id: first.id, role: 'viewer', organization_id: orgId });
    // Each membership's token is of its own organization.
    const info = expectStatus(await typedClient(server, again.token).token.retrieve(), 200).body;
    expect(info.organization_id).toBe(orgId);
  });

  it('a choice posted without the password signs nobody in', async () => {
    const browser = new Browser(server.url);
    const url = new URL('/oauth/authorize', server.url);
    url.search = new URLSearchParams({
      response_type: 'code',
      client_id: PORTAL_CLIENT_ID,
      redirect_uri: `${server.url}/portal/callback`,
      scope: 'students:read',
      state: 'skip',
      code_challenge: 'x'.repeat(43),
      code_challenge_method: 'S256',
    }).toString();
    const login = await browser.follow(url.toString());
    const choose = formAction(login.body, '/login').replace(/\/login$/, '/organization');
    const res = await browser.follow(choose, { method: 'POST', form: { organization: orgId } });
    expect(res.status).toBe(400);
    expect(res.body).toContain('Sign in first');
  });

  it('a choice of an organization the account is not in signs nobody in', async () => {
    const other = (await server.createOrganization({ name: 'Third School' })).id;
    const stranger = (await server.createOrganization({ name: 'Not Yours' })).id;
    const email = `three${nextPerson()}@schools.example`;
    await server.createUser(orgId, email, PASSWORD, { role: 'viewer' });
    await server.createUser(other, email, PASSWORD, { role: 'viewer' });
    await expect(portalSignIn(email, new Browser(server.url), PASSWORD, stranger)).rejects.toThrow(
      /no code/,
    );
  });

  /** Invites `email` with `api` and accepts on the link's page with `password`: the status. */
  async function inviteAndAccept(
    api: ReturnType<typeof asOperator>,
    email: string,
    password: string,
  ) {
    const { accept_url } = expectStatus(
      await api.invitations.create({ body: { email, role: 'viewer' } }),
      201,
    ).body;
    const html = await (await fetch(accept_url!)).text();
    const token = /name="token" value="([^"]+)"/.exec(html)![1]!;
    const res = await fetch(`${server.url}/invitations/accept`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: server.url },
      body: new URLSearchParams({ token, password, password_confirmation: password }).toString(),
    });
    return res.status;
  }
  const NEW_PASSWORD = 'a different long passphrase';

  it('the last membership removed takes the account: the address then starts afresh', async () => {
    const other = (await server.createOrganization({ name: 'Fourth School' })).id;
    const email = `last${nextPerson()}@schools.example`;
    const first = await server.createUser(orgId, email, PASSWORD, { role: 'viewer' });
    const second = await server.createUser(other, email, PASSWORD, { role: 'viewer' });
    const otherAdmin = typedClient(server, (await server.createToken(other, ['all'])).token);

    await remove(first.id);
    // Still a person elsewhere: joining again takes that account's password.
    expect(await inviteAndAccept(asOperator(), email, NEW_PASSWORD)).toBe(400);
    expectStatus(await otherAdmin.members.delete({ params: { id: second.id } }), 200);
    // Nobody's now: a new password makes a new account.
    expect(await inviteAndAccept(asOperator(), email, NEW_PASSWORD)).toBe(303);
    await expect(portalSignIn(email, new Browser(server.url), PASSWORD)).rejects.toThrow();
    expect((await portalSignIn(email, new Browser(server.url), NEW_PASSWORD)).token).toBeTruthy();
  });

  it('two last removals at once leave no account behind', async () => {
    const other = (await server.createOrganization({ name: 'Seventh School' })).id;
    const email = `both${nextPerson()}@schools.example`;
    const first = await server.createUser(orgId, email, PASSWORD, { role: 'viewer' });
    const second = await server.createUser(other, email, PASSWORD, { role: 'viewer' });
    const otherAdmin = typedClient(server, (await server.createToken(other, ['all'])).token);
    await Promise.all([remove(first.id), otherAdmin.members.delete({ params: { id: second.id } })]);
    expect(await server.dataSource.getRepository(AccountRecord).countBy({ email })).toBe(0);
  });

  it('a deleted sandbox takes the accounts of its members that belong nowhere else', async () => {
    const sandbox = expectStatus(
      await asOperator().sandboxes.create({ body: { name: 'Invites', students: 0 } }),
      201,
    ).body;
    // A sandbox takes no invitations now; members of its own are those it took before.
    const email = `sandboxed${nextPerson()}@schools.example`;
    await server.createUser(sandbox.id, email, PASSWORD, { role: 'viewer' });
    expect(await server.dataSource.getRepository(AccountRecord).countBy({ email })).toBe(1);
    expectStatus(await asOperator().sandboxes.delete({ params: { id: sandbox.id } }), 200);
    // No personal data outlives every access.
    expect(await server.dataSource.getRepository(AccountRecord).countBy({ email })).toBe(0);
    expect(await inviteAndAccept(asOperator(), email, NEW_PASSWORD)).toBe(303);
  });

  it("switching organizations in the portal takes no password, and ends the previous membership's portal token", async () => {
    const other = (await server.createOrganization({ name: 'Fifth School' })).id;
    const email = `switch${nextPerson()}@schools.example`;
    await server.createUser(orgId, email, PASSWORD, { role: 'viewer' });
    await server.createUser(other, email, PASSWORD, { role: 'admin' });
    const browser = new Browser(server.url);
    const here = await portalSignIn(email, browser, PASSWORD, orgId);
    const me = (token: string) => typedClient(server, token).user.retrieve();
    expect(expectStatus(await me(here.token), 200).body.organization_id).toBe(orgId);

    const there = await portalSignIn(email, browser, 'not asked', other, { prompt: 'login' });
    expect(there.choicePage).toContain('Fifth School (admin)');
    expect(expectStatus(await me(there.token), 200).body.organization_id).toBe(other);
    // Nothing of the first membership stays signed in out of sight.
    expect((await me(here.token)).status).toBe(401);
  });

  it('a choice posted after the password changed signs nobody in', async () => {
    const other = (await server.createOrganization({ name: 'Sixth School' })).id;
    const email = `changed${nextPerson()}@schools.example`;
    const first = await server.createUser(orgId, email, PASSWORD, { role: 'viewer' });
    await server.createUser(other, email, PASSWORD, { role: 'viewer' });
    const { token } = await server.createToken(orgId, ['all'], { userId: first.id });
    const changePassword = async () => {
      const res = await typedClient(server, token).user.changePassword({
        body: { current_password: PASSWORD, new_password: NEW_PASSWORD },
      });
      expect(res.status).toBe(204);
    };
    await expect(
      portalSignIn(email, new Browser(server.url), PASSWORD, other, {
        beforeChoice: changePassword,
      }),
    ).rejects.toThrow(/no code: 400/);
  });
});
