/**
 * `PATCH /v1/oauth_clients/{id}`: a new name shows on the consent page, new redirect URIs take
 * over from the old ones (a code issued to the old ones is not exchanged, tokens stay), bad input
 * is a 400 naming the field, and only the client's member or an admin holding its scopes may
 * change it. Driven with openid-client through the real login and consent pages.
 */
import { authorizeInBrowser, Browser, discover, oidc } from './support/oauth';
import { expectStatus } from './support/api';
import {
  api,
  authorizationRequest,
  codeFlow,
  newMember,
  oauthError,
  orgId,
  otherOrgId,
  PASSWORD,
  REDIRECT_URI,
  server,
  setUpNorthside,
} from './support/northside';

setUpNorthside();

const MOVED_URI = 'https://app.example/oauth/return';

let admin: string;

beforeAll(async () => {
  admin = (await server.createToken(orgId, ['all'])).token;
});

/** A confidential app registered over the API, and openid-client's configuration for it. */
async function register(name = 'Attendance Bridge') {
  const created = expectStatus(
    await api(admin).oauthClients.create({
      body: {
        name,
        type: 'confidential',
        redirect_uris: [REDIRECT_URI],
        scopes: ['students:read', 'courses:read'],
      },
    }),
    201,
  ).body;
  return { id: created.id, config: await discover(server, created.id, created.client_secret) };
}

const update = (token: string, id: string, body: Record<string, unknown>) =>
  api(token).oauthClients.update({ params: { id }, body });

async function auditedChanges(id: string) {
  const events = expectStatus(
    await api(admin).auditEvents.list({ query: { action: 'oauth_client.updated' } }),
    200,
  ).body.data;
  return events.filter((event) => event.target.id === id).map((event) => event.changes);
}

describe('changing an OAuth client', () => {
  it('renames it: the consent page shows the new name, the audit log has before and after', async () => {
    const app = await register('Attendance Bridge');
    const renamed = expectStatus(await update(admin, app.id, { name: 'Attendance Bridge 2' }), 200);
    expect(renamed.body).toMatchObject({ id: app.id, name: 'Attendance Bridge 2' });
    expect(renamed.body).not.toHaveProperty('client_secret');
    const { result } = await codeFlow(app.config);
    expect(result.consentPage).toContain('Attendance Bridge 2');
    expect(await auditedChanges(app.id)).toEqual([
      { name: ['Attendance Bridge', 'Attendance Bridge 2'] },
    ]);
    // The same values again change nothing and record nothing.
    expectStatus(await update(admin, app.id, { name: 'Attendance Bridge 2' }), 200);
    expectStatus(await update(admin, app.id, {}), 200);
    expect(await auditedChanges(app.id)).toHaveLength(1);
  });

  it('moves its redirect URIs: the new one works, the old one and its pending code do not, tokens stay', async () => {
    const app = await register();
    const earlier = await codeFlow(app.config);
    // A user mid-sign-in: the code is issued to the old URI but not yet exchanged.
    const pending = await authorizationRequest(app.config);
    const halfway = await authorizeInBrowser(server, pending.url, await newMember());

    const moved = expectStatus(await update(admin, app.id, { redirect_uris: [MOVED_URI] }), 200);
    expect(moved.body.redirect_uris).toEqual([MOVED_URI]);

    const refusedCode = await oauthError(
      oidc.authorizationCodeGrant(app.config, halfway.callback, {
        pkceCodeVerifier: pending.verifier,
        expectedState: pending.state,
      }),
    );
    expect(refusedCode).toBe('invalid_grant');
    const old = await authorizationRequest(app.config);
    const oldPage = await new Browser(server.url).request(old.url.toString());
    expect(oldPage.status).toBe(400);
    expect(oldPage.headers.get('location')).toBeNull();

    const { tokens, result } = await codeFlow(app.config, { redirect_uri: MOVED_URI });
    expect(result.callback.origin + result.callback.pathname).toBe(MOVED_URI);
    expect(expectStatus(await api(tokens.access_token).students.list(), 200).status).toBe(200);
    // What users granted before the move still works.
    expect((await api(earlier.tokens.access_token).students.list()).status).toBe(200);
    expect(await auditedChanges(app.id)).toEqual([
      { redirect_uris: [[REDIRECT_URI], [MOVED_URI]] },
    ]);
  });

  it.each([
    [{ redirect_uris: ['http://app.example/cb'] }, 'redirect_uris.0', 'must use https'],
    [{ redirect_uris: ['https://app.example/cb#frag'] }, 'redirect_uris', ''],
    [{ redirect_uris: [] }, 'redirect_uris', 'authorization_code needs at least one'],
    [{ redirect_uris: [MOVED_URI, MOVED_URI] }, 'redirect_uris', 'must not repeat'],
    [{ scopes: ['students:write'] }, 'scopes', ''],
    [{ type: 'public' }, 'type', ''],
    [{ name: '' }, 'name', ''],
  ])('refuses %j with a 400 naming %s, and changes nothing', async (body, field, message) => {
    const app = await register();
    const before = expectStatus(await api(admin).oauthClients.retrieve({ params: app }), 200).body;
    const res = await update(admin, app.id, body);
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const problem = res.body as { detail: string; errors: { path: string; message: string }[] };
    expect(problem.errors.map((error) => error.path).join(' ')).toContain(field);
    expect(problem.detail + problem.errors.map((error) => error.message).join(' ')).toContain(
      message,
    );
    const after = expectStatus(await api(admin).oauthClients.retrieve({ params: app }), 200).body;
    expect(after).toEqual(before);
  });

  it('is refused to a member who does not own it, to a token without its scopes, and to another organization', async () => {
    const app = await register();
    const developer = await server.createUser(orgId, 'dev-app@school.example', PASSWORD, {
      role: 'developer',
    });
    const developerToken = await server.createToken(orgId, ['all'], { userId: developer.id });
    const narrow = await server.createToken(orgId, ['oauth_clients:write', 'oauth_clients:read']);
    const outsider = await server.createToken(otherOrgId, ['all']);
    const asDeveloper = await update(developerToken.token, app.id, { name: 'Mine now' });
    expect(asDeveloper.status).toBe(403);
    expect(JSON.stringify(asDeveloper.body)).toContain('only an admin may change it');
    const asNarrow = await update(narrow.token, app.id, { redirect_uris: [MOVED_URI] });
    expect(asNarrow.status).toBe(403);
    expect(JSON.stringify(asNarrow.body)).toContain('students:read');
    expect((await update(outsider.token, app.id, { name: 'Theirs' })).status).toBe(404);
    const after = expectStatus(await api(admin).oauthClients.retrieve({ params: app }), 200).body;
    expect(after).toMatchObject({ name: 'Attendance Bridge', redirect_uris: [REDIRECT_URI] });
  });

  it('binds the client to an expiring caller that changes it, and not to one that changes nothing', async () => {
    const app = await register();
    const expiresAt = new Date(Date.now() + 3_600_000);
    const expiring = await server.createToken(orgId, ['all'], { expiresAt });
    const same = expectStatus(
      await update(expiring.token, app.id, { name: 'Attendance Bridge' }),
      200,
    );
    expect(same.body.expires_at).toBeNull();
    const renamed = expectStatus(await update(expiring.token, app.id, { name: 'Renamed' }), 200);
    expect(renamed.body.expires_at).not.toBeNull();
    expect(Date.parse(renamed.body.expires_at!)).toBeLessThanOrEqual(expiresAt.getTime());
  });
});
