/**
 * Members and roles, enforced on the server: a token acting for a member never does
 * more than the member's role allows (checked on every request, so a demotion or removal applies
 * on the next one), OAuth consent grants no more than the role, and the last admin stays.
 * Invitations and `/v1/user` are invitations.e2e-spec's.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ROLE_SCOPES } from '@platform/contract';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { loadConfig } from '../src/config/env';
import { dataSourceOptions } from '../src/database/data-source';
import { APP_SCHEMA } from '../src/schema';
import { expectStatus, typedClient } from './support/api';
import { discover, oidc } from './support/oauth';
import {
  asOperator,
  member,
  nextPerson,
  oauthToken,
  operator,
  orgId,
  PASSWORD,
  people,
  server,
  setUpRiverside,
  tokenInfo,
} from './support/riverside';
import { rawCall } from './support/server';

setUpRiverside();

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
        body: { ...body, student_number: `R-${nextPerson()}` },
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
    const student = { student_number: `S-${nextPerson()}`, first_name: 'Ada', last_name: 'Byron' };
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
      body: { ...student, student_number: `S-${nextPerson()}` },
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
    const stranger = await server.createUser(
      other,
      `stranger${nextPerson()}@else.example`,
      PASSWORD,
    );
    const theirs = { params: { id: stranger.id } };
    expect((await asOperator().members.retrieve(theirs)).status).toBe(404);
    expect((await asOperator().members.delete(theirs)).status).toBe(404);
    expect((await asOperator().members.update({ ...theirs, body: { name: 'x' } })).status).toBe(
      404,
    );
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
