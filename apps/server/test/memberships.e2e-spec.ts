/**
 * One person, several organizations (decision 34): an account signs in once and chooses the
 * organization; each session and token is one membership's, with that membership's role.
 */
import { expectStatus, typedClient } from './support/api';
import { Browser } from '../src/testing';
import {
  nextPerson,
  orgId,
  PASSWORD,
  portalSignIn,
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

    const again = await portalSignIn(email, new Browser(server.url), PASSWORD, orgId);
    const them = expectStatus(await typedClient(server, again.token).user.retrieve(), 200).body;
    expect(them).toMatchObject({ id: first.id, role: 'viewer', organization_id: orgId });
    // Each membership's token is of its own organization.
    const info = expectStatus(await typedClient(server, again.token).token.retrieve(), 200).body;
    expect(info.organization_id).toBe(orgId);
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
});
