/**
 * Members, roles and invitations, enforced on the server: a token acting for a member never does
 * more than the member's role allows (checked on every request, so a demotion or removal applies
 * on the next one), OAuth consent grants no more than the role, the last admin stays, and an
 * invitation's one-time link makes one member through its HTML page.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ROLE_SCOPES, type Role } from '@platform/contract';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { loadConfig } from '../src/config/env';
import { dataSourceOptions } from '../src/database/data-source';
import { APP_SCHEMA } from '../src/schema';
import { expectStatus, typedClient } from './support/api';
import { authorizeInBrowser, discover, formAction, oidc } from './support/oauth';
import { rawCall, startServer, type TestServer } from './support/server';

const PASSWORD = 'correct horse battery staple';
const REDIRECT_URI = 'https://portal.example/callback';

let server: TestServer;
let orgId: string;
/** An operator's token (no member): sets things up. */
let operator: string;
let appClient: { id: string; client_secret: string | null };
let people = 0;

beforeAll(async () => {
  // No deliveries are needed: an endpoint only has to be registered (on a loopback address).
  server = await startServer({
    RATE_LIMIT_ANONYMOUS: '10000',
    WEBHOOK_DISPATCHER: 'false',
    WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
  });
  orgId = (await server.createOrganization({ name: 'Riverside School' })).id;
  ({ token: operator } = await server.createToken(orgId, ['all']));
  // The school's standing admin, so demoting or removing the members below is never the last admin.
  await server.createUser(orgId, 'head@riverside.example', PASSWORD);
  appClient = await server.createOAuthClient(orgId, {
    type: 'confidential',
    name: 'School Portal',
    redirect_uris: [REDIRECT_URI],
    scopes: ['all'],
  });
});

afterAll(() => server?.close());

/** A new member with `role` and a personal access token they own holding `scopes`. */
async function member(role: Role, scopes: Parameters<TestServer['createToken']>[1] = ['all']) {
  const email = `person${++people}@riverside.example`;
  const { id } = await server.createUser(orgId, email, PASSWORD, { role });
  const { token } = await server.createToken(orgId, scopes, { userId: id });
  return { id, email, token, api: typedClient(server, token) };
}

/** An OAuth access token the member approved through the real sign-in and consent pages. */
async function oauthToken(
  user: { email: string; password?: string },
  scope: string,
): Promise<{ accessToken: string; consentPage: string }> {
  const cfg = await discover(server, appClient.id, appClient.client_secret);
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const url = oidc.buildAuthorizationUrl(cfg, {
    redirect_uri: REDIRECT_URI,
    scope,
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
  });
  const result = await authorizeInBrowser(server, url, {
    email: user.email,
    password: user.password ?? PASSWORD,
  });
  const tokens = await oidc.authorizationCodeGrant(cfg, result.callback, {
    pkceCodeVerifier: verifier,
    expectedState: state,
  });
  return { accessToken: tokens.access_token, consentPage: result.consentPage };
}

const asOperator = () => typedClient(server, operator);

/** What `GET /v1/token` says of `token`. */
async function tokenInfo(token: string) {
  return expectStatus(await typedClient(server, token).token.retrieve(), 200).body;
}

describe('roles cap every token acting for a member', () => {
  it("a viewer's token is refused creating a token (403 insufficient_scope naming tokens:write), even though it was granted tokens:write while its member was an admin", async () => {
    const alice = await member('admin', ['tokens:write', 'tokens:read', 'students:read']);
    const before = await alice.api.personalAccessTokens.create({
      body: { name: 'ci', scopes: ['students:read'] },
    });
    expect(before.status).toBe(201);

    const demoted = await asOperator().members.update({
      params: { id: alice.id },
      body: { role: 'viewer' },
    });
    expect(expectStatus(demoted, 200).body.role).toBe('viewer');

    const res = await alice.api.personalAccessTokens.create({
      body: { name: 'ci 2', scopes: ['students:read'] },
    });
    const after = expectStatus(res, 403);
    expect(after.body.code).toBe('insufficient_scope');
    expect(after.body.detail).toContain("'tokens:write'");
    expect(after.headers.get('www-authenticate')).toContain('scope="tokens:write"');
    // What the token can still do: its scopes within the viewer role.
    const info = await tokenInfo(alice.token);
    expect(info.scopes.sort()).toEqual(['students:read', 'tokens:read']);
    expect(info.user_id).toBe(alice.id);
  });

  it('a developer demoted to viewer loses write on the very next request, through an OAuth token too', async () => {
    const dev = await member('developer', ['students:read', 'students:write']);
    const { accessToken } = await oauthToken(dev, 'students:read students:write');
    const viaOauth = typedClient(server, accessToken);
    const body = { student_number: `R-${people}`, first_name: 'Grace', last_name: 'Hopper' };
    expect((await dev.api.students.create({ body })).status).toBe(201);
    expect(
      (await viaOauth.students.create({ body: { ...body, student_number: `R-${people}b` } }))
        .status,
    ).toBe(201);

    const demoted = await asOperator().members.update({
      params: { id: dev.id },
      body: { role: 'viewer' },
    });
    expect(demoted.status).toBe(200);
    for (const api of [dev.api, viaOauth]) {
      const refused = await api.students.create({
        body: { ...body, student_number: `R-${++people}` },
      });
      expect(expectStatus(refused, 403).body.code).toBe('insufficient_scope');
      expect((await api.students.list()).status).toBe(200);
    }
  });

  it('a token made by a member is owned by them, and cannot get scopes beyond their role (delegation uses the effective scopes)', async () => {
    const dev = await member('developer', ['all']);
    const res = await dev.api.personalAccessTokens.create({
      body: { name: 'admin-ish', scopes: ['members:write'] },
    });
    const tooMuch = expectStatus(res, 403);
    expect(tooMuch.body.code).toBe('forbidden');
    expect(tooMuch.body.detail).toContain('members:write');

    const made = await dev.api.personalAccessTokens.create({
      body: { name: 'all I can', scopes: ['students:read', 'tokens:write'] },
    });
    const madeToken = expectStatus(made, 201).body.token;
    expect((await tokenInfo(madeToken)).user_id).toBe(dev.id);
    // Owned: demoting the member caps the new token as well.
    await asOperator().members.update({ params: { id: dev.id }, body: { role: 'viewer' } });
    expect((await tokenInfo(madeToken)).scopes).toEqual(['students:read']);
  });

  it('an operator token (no member) keeps its own scopes: roles cap only tokens acting for a member', async () => {
    const info = await tokenInfo(operator);
    expect(info.user_id).toBeNull();
    expect(info.scopes).toContain('members:write');
  });

  it("OAuth consent grants no more than the member's role, and the grant stays so after a promotion", async () => {
    const viewer = await member('viewer');
    const { accessToken, consentPage } = await oauthToken(viewer, 'students:read students:write');
    expect(consentPage).toContain('<code>students:read</code>');
    expect(consentPage).toMatch(
      /Not granted, because your role \(viewer\)[^<]*<code>students:write<\/code>/,
    );
    expect((await tokenInfo(accessToken)).scopes).toEqual(['students:read']);

    // Promoted later: the token holds only what was granted.
    await asOperator().members.update({ params: { id: viewer.id }, body: { role: 'admin' } });
    expect((await tokenInfo(accessToken)).scopes).toEqual(['students:read']);
  });

  it('giving a role needs a token holding all of its scopes (403 forbidden otherwise)', async () => {
    const target = await member('viewer');
    const { token: narrow } = await server.createToken(orgId, ['members:write', 'members:read']);
    const res = await typedClient(server, narrow).members.update({
      params: { id: target.id },
      body: { role: 'admin' },
    });
    const refused = expectStatus(res, 403);
    expect(refused.body.code).toBe('forbidden');
    expect(refused.body.detail).toContain("'admin'");
    const unchanged = await asOperator().members.retrieve({ params: { id: target.id } });
    expect(expectStatus(unchanged, 200).body.role).toBe('viewer');
  });
});

describe("an OAuth app a member registers acts with that member's authority", () => {
  it("its client credentials tokens are capped by the maker's role, make owned tokens, and end with the membership", async () => {
    const dev = await member('developer');
    const res = await dev.api.oauthClients.create({
      body: {
        name: 'Nightly sync',
        type: 'confidential',
        redirect_uris: [],
        scopes: ['students:read', 'students:write', 'tokens:write'],
        grant_types: ['client_credentials'],
      },
    });
    expect(res.body).toEqual(expect.objectContaining({ id: expect.any(String) }));
    const created = expectStatus(res, 201);
    const cfg = await discover(server, created.body.id, created.body.client_secret);
    const { access_token: appToken } = await oidc.clientCredentialsGrant(cfg, {
      scope: 'students:read students:write tokens:write',
    });
    const app = typedClient(server, appToken);
    expect((await tokenInfo(appToken)).user_id).toBe(dev.id);
    const student = { student_number: `S-${++people}`, first_name: 'Ada', last_name: 'Byron' };
    expect((await app.students.create({ body: student })).status).toBe(201);
    // A token the app makes belongs to the member too.
    const made = await app.personalAccessTokens.create({
      body: {
        name: 'from the app',
        scopes: ['students:write'],
        // No longer than the app's one-hour token that makes it.
        expires_at: new Date(Date.now() + 30 * 60_000).toISOString(),
      },
    });
    const madeToken = expectStatus(made, 201).body.token;

    await asOperator().members.update({ params: { id: dev.id }, body: { role: 'viewer' } });
    const refused = await app.students.create({
      body: { ...student, student_number: `S-${++people}` },
    });
    expect(expectStatus(refused, 403).body.code).toBe('insufficient_scope');
    const byMade = await typedClient(server, madeToken).students.create({ body: student });
    expect(byMade.status).toBe(403);
    expect((await app.students.list()).status).toBe(200);

    await asOperator().members.delete({ params: { id: dev.id } });
    expect((await app.students.list()).status).toBe(401);
  });
});

describe('changing a member takes holding what they hold', () => {
  it('a token with members:write but not every admin scope cannot demote or remove an admin (403)', async () => {
    const admin = await member('admin');
    const { token } = await server.createToken(orgId, ['members:read', 'members:write']);
    const api = typedClient(server, token);
    const adminId = { params: { id: admin.id } };
    expect((await api.members.update({ ...adminId, body: { role: 'viewer' } })).status).toBe(403);
    const remove = await api.members.delete(adminId);
    expect(expectStatus(remove, 403).body.detail).toContain("'admin'");
    // Holding every scope of the member's role, it may.
    const viewer = await member('viewer');
    const { token: wide } = await server.createToken(orgId, [
      'members:read',
      'members:write',
      ...ROLE_SCOPES.viewer,
    ]);
    const removed = await typedClient(server, wide).members.delete({ params: { id: viewer.id } });
    expect(removed.status).toBe(200);
  });
});

describe('members API', () => {
  it('lists members with the list conventions: filter by role, sort by email, pages', async () => {
    const org = (await server.createOrganization({ name: 'List School' })).id;
    const { token } = await server.createToken(org, ['members:read']);
    for (const [email, role] of [
      ['c@list.example', 'viewer'],
      ['a@list.example', 'admin'],
      ['b@list.example', 'developer'],
    ] as const) {
      await server.createUser(org, email, PASSWORD, { role });
    }
    const api = typedClient(server, token);
    const all = expectStatus(
      await api.members.list({ query: { sort: 'email', per_page: 2 } }),
      200,
    );
    expect(all.body.data.map((m) => m.email)).toEqual(['a@list.example', 'b@list.example']);
    expect(all.body.meta).toMatchObject({ total: 3, total_pages: 2 });
    expect(all.body.data[0]).toMatchObject({
      object: 'member',
      role: 'admin',
      name: null,
      organization_id: org,
    });
    const viewers = await api.members.list({ query: { role: 'viewer,developer', sort: 'email' } });
    expect(expectStatus(viewers, 200).body.data.map((m) => m.role)).toEqual([
      'developer',
      'viewer',
    ]);
    // A role the contract does not know: sent raw.
    const bad = await rawCall(server, '/v1/members?role=owner', { token });
    expect(bad.status).toBe(400);
  });

  it('changes a name; null clears it; what is read back is what was written', async () => {
    const m = await member('developer');
    const byId = { params: { id: m.id } };
    const before = expectStatus(await asOperator().members.retrieve(byId), 200).body;
    const named = await asOperator().members.update({ ...byId, body: { name: 'Ada Lovelace' } });
    expect(expectStatus(named, 200).body).toMatchObject({
      id: m.id,
      email: m.email,
      name: 'Ada Lovelace',
      role: 'developer',
    });
    // Stored, not just echoed: a read and the list say so, and only the name moved.
    const read = expectStatus(await asOperator().members.retrieve(byId), 200).body;
    expect(read).toEqual({ ...before, name: 'Ada Lovelace', updated_at: read.updated_at });
    expect(Date.parse(read.updated_at)).toBeGreaterThanOrEqual(Date.parse(before.updated_at));
    const listed = expectStatus(await asOperator().members.list({ query: { per_page: 100 } }), 200);
    expect(listed.body.data.find((x) => x.id === m.id)?.name).toBe('Ada Lovelace');
    // Their own token sees the new name too.
    expect(expectStatus(await m.api.user.retrieve(), 200).body.name).toBe('Ada Lovelace');

    const cleared = await asOperator().members.update({ ...byId, body: { name: null } });
    expect(expectStatus(cleared, 200).body.name).toBeNull();
    const reread = expectStatus(await asOperator().members.retrieve(byId), 200).body;
    expect(reread).toMatchObject({ name: null, role: 'developer', email: m.email });
  });

  it('refuses removing or demoting the last admin (409), and allows it while another admin remains', async () => {
    const org = (await server.createOrganization({ name: 'Lone School' })).id;
    const { token } = await server.createToken(org, ['all']);
    const api = typedClient(server, token);
    const first = await server.createUser(org, 'first@lone.example', PASSWORD);
    const firstId = { params: { id: first.id } };

    const demote = await api.members.update({ ...firstId, body: { role: 'developer' } });
    const conflict = expectStatus(demote, 409);
    expect(conflict.body.code).toBe('conflict');
    expect(conflict.body.detail).toMatch(/last admin/);
    const remove = await api.members.delete(firstId);
    expect(expectStatus(remove, 409).body.detail).toMatch(/last admin/);

    const second = await server.createUser(org, 'second@lone.example', PASSWORD);
    const secondId = { params: { id: second.id } };
    expect((await api.members.update({ ...firstId, body: { role: 'developer' } })).status).toBe(
      200,
    );
    expect((await api.members.delete(secondId)).status).toBe(409);
    expect((await api.members.delete(firstId)).status).toBe(200);
    const left = expectStatus(await api.members.list(), 200);
    expect(left.body.data.map((m) => m.id)).toEqual([second.id]);
  });

  it('removing a member ends their tokens (PAT and OAuth): 401 on the next request; the PAT is listed as revoked', async () => {
    const leaver = await member('developer', ['students:read', 'tokens:read']);
    const { accessToken } = await oauthToken(leaver, 'students:read webhooks:write');
    expect((await leaver.api.students.list()).status).toBe(200);
    const viaOauth = typedClient(server, accessToken);
    const res = await viaOauth.webhookEndpoints.create({
      body: { url: 'https://127.0.0.1:9/hooks', events: ['student.created'] },
    });
    const endpoint = expectStatus(res, 201);
    expect(endpoint.body.owner?.user_id).toBe(leaver.id);
    expect((await viaOauth.students.list()).status).toBe(200);
    const patId = (await tokenInfo(leaver.token)).personal_access_token_id!;

    const removed = await asOperator().members.delete({ params: { id: leaver.id } });
    expect(removed.status).toBe(200);
    expect(removed.body).toEqual({ id: leaver.id, object: 'member', deleted: true });

    for (const token of [leaver.token, accessToken]) {
      const refused = await typedClient(server, token).students.list();
      expect(refused.status).toBe(401);
      expect(refused.headers.get('www-authenticate')).toContain('error="invalid_token"');
    }
    const pat = await asOperator().personalAccessTokens.retrieve({ params: { id: patId } });
    expect(expectStatus(pat, 200).body.revoked_at).not.toBeNull();
    // What they set up through their OAuth grant stops, visibly.
    const stopped = await asOperator().webhookEndpoints.retrieve({
      params: { id: endpoint.body.id },
    });
    expect(stopped.body).toMatchObject({ enabled: false, disabled_reason: 'member_removed' });
    // Their OAuth artifacts are gone: no grant, token or session of theirs remains.
    const left: unknown[] = await server.dataSource.query(
      `SELECT kind FROM oauth_artifacts WHERE payload LIKE '%${leaver.id}%'`,
    );
    expect(left).toEqual([]);
    expect((await asOperator().members.retrieve({ params: { id: leaver.id } })).status).toBe(404);
  });

  it("another organization's member is a 404", async () => {
    const other = (await server.createOrganization({ name: 'Elsewhere' })).id;
    const stranger = await server.createUser(other, `stranger${++people}@else.example`, PASSWORD);
    const theirs = { params: { id: stranger.id } };
    expect((await asOperator().members.retrieve(theirs)).status).toBe(404);
    expect((await asOperator().members.delete(theirs)).status).toBe(404);
    expect((await asOperator().members.update({ ...theirs, body: { name: 'x' } })).status).toBe(
      404,
    );
  });
});

describe('invitations', () => {
  async function invite(
    email: string,
    role: Role = 'developer',
    extraHeaders: Record<string, string> = {},
  ) {
    return asOperator().invitations.create({ body: { email, role }, extraHeaders });
  }

  /** A new invitation (201), with its one-time `accept_url`. */
  async function invited(email: string, role?: Role) {
    return expectStatus(await invite(email, role), 201).body;
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
    const url = new URL(res.body.accept_url);
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

  it('refuses inviting an email that is already a member (409 naming email)', async () => {
    const existing = await member('viewer');
    const res = await invite(existing.email.toUpperCase());
    expect(expectStatus(res, 409).body.detail).toContain('already a member');
  });

  it('does not tell whether an email has an account in another organization; accepting then says the email is taken (409 page), and makes nobody', async () => {
    const other = (await server.createOrganization({ name: 'Other Place' })).id;
    const email = `taken${++people}@elsewhere.example`;
    await server.createUser(other, email, PASSWORD);
    const created = await invited(email);
    const accepted = await acceptThroughPage(created.accept_url, {
      password: PASSWORD,
      password_confirmation: PASSWORD,
    });
    expect(accepted.res.status).toBe(409);
    expect(accepted.body).toContain('already exists');
    const mine = await asOperator().members.list({ query: { per_page: 100 } });
    expect(expectStatus(mine, 200).body.data.map((m) => m.email)).not.toContain(email);
  });

  it('refuses (403) inviting with a role whose scopes the calling token lacks', async () => {
    const { token } = await server.createToken(orgId, ['members:write']);
    const res = await typedClient(server, token).invitations.create({
      body: { email: 'sneaky@riverside.example', role: 'admin' },
    });
    expect(expectStatus(res, 403).body.code).toBe('forbidden');
  });

  it('the invitee opens the link, sets a password on the HTML page, becomes a member with the role, lands on the portal, and can sign in; the link then works no more', async () => {
    const email = `invitee${++people}@riverside.example`;
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
    const email = `browser${++people}@riverside.example`;
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
    const email = `careful${++people}@riverside.example`;
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
    const created = await invited(`withdrawn${++people}@riverside.example`);
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

describe('migration', () => {
  it('makes every existing user an admin, with no name', async () => {
    const admin = process.env.TEST_DATABASE_URL;
    let url: string;
    let drop: () => Promise<void>;
    if (admin) {
      const name = `platform_test_${randomBytes(6).toString('hex')}`;
      const c = new Client({ connectionString: admin });
      await c.connect();
      await c.query(`CREATE DATABASE ${name}`);
      await c.end();
      const u = new URL(admin);
      u.pathname = `/${name}`;
      url = u.toString();
      drop = async () => {
        const d = new Client({ connectionString: admin });
        await d.connect();
        await d.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        await d.end();
      };
    } else {
      const dir = mkdtempSync(path.join(tmpdir(), 'platform-migration-'));
      url = `sqlite:${path.join(dir, 'db.sqlite')}`;
      drop = () => Promise.resolve(rmSync(dir, { recursive: true, force: true }));
    }
    try {
      const options = dataSourceOptions(loadConfig({ DATABASE_URL: url }).database, APP_SCHEMA);
      const all = options.migrations as (new () => { name?: string })[];
      const members = all.find((m) => new m().name === 'Members1766200000001')!;
      expect(members).toBeDefined();
      // The database as it was before: the migrations ahead of this one (they run in order, and
      // later ones may build on it).
      const before = new DataSource({ ...options, migrations: all.slice(0, all.indexOf(members)) });
      await before.initialize();
      await before.runMigrations({ transaction: 'each' });
      // Rows as they were before the migration; timestamps as literals both databases take.
      const at = "'2026-01-01 00:00:00'";
      await before.query(
        `INSERT INTO organizations (id, name, plan, created_at, updated_at) VALUES ('org_01JD6Y3ZK8R5V2N3M4P5Q6R7S8', 'Old School', 'standard', ${at}, ${at})`,
      );
      await before.query(
        `INSERT INTO users (id, organization_id, email, password_hash, created_at, updated_at) VALUES ('usr_01JD6Y3ZK8R5V2N3M4P5Q6R7S8', 'org_01JD6Y3ZK8R5V2N3M4P5Q6R7S8', 'old@school.example', 'x', ${at}, ${at})`,
      );
      await before.destroy();

      const after = new DataSource(options);
      await after.initialize();
      await after.runMigrations({ transaction: 'each' });
      const rows: { role: string; name: string | null }[] = await after.query(
        'SELECT role, name FROM users',
      );
      expect(rows).toEqual([{ role: 'admin', name: null }]);
      await after.destroy();
    } finally {
      await drop();
    }
  });

  it('ROLE_SCOPES keeps viewers to reads and admins alone on members:write', () => {
    expect(ROLE_SCOPES.viewer.every((s) => s.endsWith(':read'))).toBe(true);
    expect(ROLE_SCOPES.developer).not.toContain('members:write');
    expect(ROLE_SCOPES.admin).toContain('members:write');
  });
});
