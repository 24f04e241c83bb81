/**
 * Offboarding and sessions (issue 31): nothing a member made or approved outlives their access,
 * acting on a credential needs being its owner or an admin, signing out signs out, and password
 * checks are limited and recorded. One regression test per finding, on SQLite and PostgreSQL.
 */
import { createHash, randomBytes } from 'node:crypto';
import { contract, operationMetadata, type Role } from '@platform/contract';
import type { AppRoute } from '@ts-rest/core';
import { PORTAL_CLIENT_ID } from '../src/oauth/portal-client';
import { Browser, formAction } from '../src/testing';
import { expectStatus, typedClient } from './support/api';
import { authorizeInBrowser, discover, oidc } from './support/oauth';
import { type Receiver, startReceiver, waitFor } from './support/receiver';
import { rawCall, startServer, type TestServer } from './support/server';

const PASSWORD = 'correct horse battery staple';
const REDIRECT_URI = 'https://app.example/callback';

let server: TestServer;
let orgId: string;
let operator: string;
let people = 0;
const receivers: Receiver[] = [];

beforeAll(async () => {
  server = await startServer({
    RATE_LIMIT_ANONYMOUS: '10000',
    RATE_LIMIT_OAUTH: '10000',
    WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    WEBHOOK_POLL_INTERVAL: '100ms',
  });
  orgId = (await server.createOrganization({ name: 'Harbour School' })).id;
  ({ token: operator } = await server.createToken(orgId, ['all']));
  // A standing admin, so removing or demoting the others is never the last admin's.
  await server.createUser(orgId, 'head@harbour.example', PASSWORD, { role: 'admin' });
});

afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  await server.close();
});

const asOperator = () => typedClient(server, operator);

async function member(role: Role) {
  const email = `staff${++people}@harbour.example`;
  const created = await server.createUser(orgId, email, PASSWORD, { role });
  const id = created.id as `usr_${string}`;
  const { token } = await server.createToken(orgId, ['all'], { userId: id });
  return { id, email, token, api: typedClient(server, token) };
}

async function remove(id: string) {
  expectStatus(await asOperator().members.delete({ params: { id } }), 200);
}

async function demote(id: string, role: Role) {
  expectStatus(await asOperator().members.update({ params: { id }, body: { role } }), 200);
}

/** The portal's sign-in as its page does it; returns the portal token and the browser. */
async function portalSignIn(email: string, browser = new Browser(server.url)) {
  const verifier = randomBytes(32).toString('base64url');
  const redirectUri = `${server.url}/portal/callback`;
  const url = new URL('/oauth/authorize', server.url);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: PORTAL_CLIENT_ID,
    redirect_uri: redirectUri,
    scope: 'students:read webhooks:read webhooks:write tokens:read tokens:write',
    state: 'portal',
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  }).toString();
  let page = await browser.follow(url.toString());
  if (page.body.includes('Sign in to continue')) {
    page = await browser.follow(formAction(page.body, '/login'), {
      method: 'POST',
      form: { email, password: PASSWORD },
    });
  }
  // Back at the portal's callback (this origin), with the code.
  const callback = new URL(page.url);
  const code = callback.searchParams.get('code');
  if (!code) throw new Error(`no code: ${page.status} ${page.body.slice(0, 300)}`);
  const token = await fetch(`${server.url}/oauth/token`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: redirectUri,
      client_id: PORTAL_CLIENT_ID,
      code_verifier: verifier,
    }),
  });
  const body = (await token.json()) as { access_token: string };
  return { token: body.access_token, browser };
}

/** The member approves `app` on the real sign-in and consent pages; its tokens for them. */
async function approve(app: { id: string; secret: string | null }, email: string, scope: string) {
  const cfg = await discover(server, app.id, app.secret);
  const verifier = oidc.randomPKCECodeVerifier();
  const url = oidc.buildAuthorizationUrl(cfg, {
    redirect_uri: REDIRECT_URI,
    scope,
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state: 's',
  });
  const approved = await authorizeInBrowser(server, url, { email, password: PASSWORD });
  return oidc.authorizationCodeGrant(cfg, approved.callback, {
    pkceCodeVerifier: verifier,
    expectedState: 's',
  });
}

/** Whether the sign-in page asks for a password when the portal starts signing in again. */
async function asksForPassword(browser: Browser): Promise<boolean> {
  const url = new URL('/oauth/authorize', server.url);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: PORTAL_CLIENT_ID,
    redirect_uri: `${server.url}/portal/callback`,
    scope: 'students:read',
    state: 'again',
    code_challenge: createHash('sha256').update('v'.repeat(43)).digest('base64url'),
    code_challenge_method: 'S256',
  }).toString();
  const page = await browser.follow(url.toString());
  return page.status === 200 && page.body.includes('Sign in to continue');
}

describe('1. a webhook endpoint made in the portal stops when its maker is removed', () => {
  it('is the member’s, and the next event is not delivered after their removal', async () => {
    const receiver = await startReceiver();
    receivers.push(receiver);
    const developer = await member('developer');
    const { token } = await portalSignIn(developer.email);
    const endpoint = expectStatus(
      await typedClient(server, token).webhookEndpoints.create({
        body: { url: receiver.url, events: ['student.created'] },
      }),
      201,
    ).body;
    expect(endpoint.member_id).toBe(developer.id);

    await remove(developer.id);
    await asOperator().students.create({
      body: { student_number: 'OFF-1', first_name: 'Personal', last_name: 'Data' },
    });
    const stopped = await waitFor(async () => {
      const res = await asOperator().webhookEndpoints.retrieve({ params: { id: endpoint.id } });
      return !expectStatus(res, 200).body.enabled && res;
    });
    expect(expectStatus(stopped, 200).body.disabled_reason).toBe('member_removed');
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(receiver.ofType('student.created')).toEqual([]);
  });

  it('keeps an endpoint bound to an app when its member edits it in the portal', async () => {
    const developer = await member('developer');
    const app = await server.createOAuthClient(orgId, {
      type: 'confidential',
      redirect_uris: [REDIRECT_URI],
    });
    const tokens = await approve(
      { id: app.id, secret: app.client_secret },
      developer.email,
      'students:read webhooks:write',
    );
    const viaApp = expectStatus(
      await typedClient(server, tokens.access_token).webhookEndpoints.create({
        body: { url: 'https://127.0.0.1:9/app', events: ['student.created'] },
      }),
      201,
    ).body;
    expect(viaApp.owner).toMatchObject({ type: 'oauth_client', id: app.id });

    const { token: portal } = await portalSignIn(developer.email);
    const edited = expectStatus(
      await typedClient(server, portal).webhookEndpoints.update({
        params: { id: viaApp.id },
        body: { description: 'edited in the portal' },
      }),
      200,
    ).body;
    expect(edited.owner).toEqual(viaApp.owner);
    expect(edited.member_id).toBe(developer.id);
  });
});

describe('2. an invitation does not outlive its inviter’s access', () => {
  async function inviteAsAdmin(admin: Awaited<ReturnType<typeof member>>) {
    return expectStatus(
      await admin.api.invitations.create({
        body: { email: `alt${++people}@harbour.example`, role: 'admin' },
      }),
      201,
    ).body;
  }

  /** The invitee opens the link, then sends the form a browser would have sent from it. */
  async function accept(acceptUrl: string) {
    const browser = new Browser(server.url);
    const page = await browser.follow(acceptUrl);
    const posted = await browser.request('/invitations/accept', {
      method: 'POST',
      form: {
        token: new URL(acceptUrl).searchParams.get('token')!,
        password: PASSWORD,
        password_confirmation: PASSWORD,
      },
    });
    return { page, posted };
  }

  async function expectRefused(invitation: { email: string; accept_url: string }) {
    const { page, posted } = await accept(invitation.accept_url);
    expect(page.body).toContain('This invitation cannot be used');
    expect(posted.status).toBeGreaterThanOrEqual(400);
    expect(posted.body).toContain('This invitation cannot be used');
    const members = expectStatus(
      await asOperator().members.list({ query: { per_page: 100 } }),
      200,
    );
    expect(members.body.data.map((m) => m.email)).not.toContain(invitation.email);
  }

  it.each([
    ['removed', (id: string) => remove(id)],
    ['demoted to developer', (id: string) => demote(id, 'developer')],
  ])('an admin’s invitation to admin stops working once they are %s', async (_what, change) => {
    const admin = await member('admin');
    const invitation = await inviteAsAdmin(admin);

    await change(admin.id);

    const pending = expectStatus(await asOperator().invitations.list(), 200).body.data;
    expect(pending.map((i) => i.id)).not.toContain(invitation.id);
    await expectRefused(invitation);
  });

  it('accepting rechecks the inviter, also when the invitation was left pending', async () => {
    const admin = await member('admin');
    const invitation = await inviteAsAdmin(admin);
    // Demoted behind the API's back (a race, a database edit): the invitation stays pending.
    await server.dataSource.query(
      server.config.database.type === 'postgres'
        ? `UPDATE users SET role = 'developer' WHERE id = $1`
        : `UPDATE users SET role = 'developer' WHERE id = ?`,
      [admin.id],
    );
    const { posted } = await accept(invitation.accept_url);
    expect(posted.body).toContain('This invitation cannot be used');
    const members = expectStatus(
      await asOperator().members.list({ query: { per_page: 100 } }),
      200,
    );
    expect(members.body.data.map((m) => m.email)).not.toContain(invitation.email);
  });
});

describe('3. acting on an OAuth client needs being its owner or an admin', () => {
  it('refuses a developer rotating an admin’s client; the admin may', async () => {
    const admin = await member('admin');
    const developer = await member('developer');
    const client = expectStatus(
      await admin.api.oauthClients.create({
        body: {
          name: 'Admin app',
          type: 'confidential',
          scopes: ['students:read'],
          grant_types: ['client_credentials'],
        },
      }),
      201,
    ).body;

    const refused = await developer.api.oauthClients.rotateSecret({ params: { id: client.id } });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ code: 'forbidden' });
    expect((refused.body as { detail: string }).detail).toContain('belongs to another member');
    const deleted = await developer.api.oauthClients.delete({ params: { id: client.id } });
    expect(deleted.status).toBe(403);

    expect((await admin.api.oauthClients.rotateSecret({ params: { id: client.id } })).status).toBe(
      200,
    );
  });

  it('ends an app a removed developer registered, also for the admin who approved it', async () => {
    const developer = await member('developer');
    const app = expectStatus(
      await developer.api.oauthClients.create({
        body: {
          name: 'Developer app',
          type: 'confidential',
          scopes: ['students:read'],
          redirect_uris: [REDIRECT_URI],
        },
      }),
      201,
    ).body;
    const admin = await member('admin');
    const tokens = await approve(
      { id: app.id, secret: app.client_secret },
      admin.email,
      'students:read',
    );
    expect((await typedClient(server, tokens.access_token).students.list()).status).toBe(200);
    const log = await asOperator().auditEvents.list({ query: { action: 'oauth_client.approved' } });
    expect(expectStatus(log, 200).body.data.some((e) => e.target.id === app.id)).toBe(true);

    await remove(developer.id);

    expect((await typedClient(server, tokens.access_token).students.list()).status).toBe(401);
    const refreshed = await fetch(`${server.url}/oauth/token`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/x-www-form-urlencoded',
        Authorization: `Basic ${Buffer.from(`${app.id}:${app.client_secret}`).toString('base64')}`,
      },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: tokens.refresh_token!,
      }),
    });
    // The app is gone with its maker: its secret no longer authenticates (RFC 6749 5.2).
    expect(refreshed.status).toBe(401);
    expect(((await refreshed.json()) as { error: string }).error).toBe('invalid_client');
  });

  it('lets an admin transfer an app before the removal, and it keeps working', async () => {
    const developer = await member('developer');
    const keeper = await member('developer');
    const app = expectStatus(
      await developer.api.oauthClients.create({
        body: {
          name: 'Kept app',
          type: 'confidential',
          scopes: ['students:read'],
          grant_types: ['client_credentials'],
        },
      }),
      201,
    ).body;
    const moved = await asOperator().oauthClients.transfer({
      params: { id: app.id },
      body: { member_id: keeper.id },
    });
    expect(expectStatus(moved, 200).body.member_id).toBe(keeper.id);
    await remove(developer.id);

    const token = await fetch(`${server.url}/oauth/token`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/x-www-form-urlencoded',
        Authorization: `Basic ${Buffer.from(`${app.id}:${app.client_secret}`).toString('base64')}`,
      },
      body: new URLSearchParams({ grant_type: 'client_credentials', scope: 'students:read' }),
    });
    const { access_token } = (await token.json()) as { access_token: string };
    const who = expectStatus(await typedClient(server, access_token).user.retrieve(), 200);
    expect(who.body.id).toBe(keeper.id);
  });
});

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

// ---------------------------------------------------------------------------------------------
// The lifecycle walk: every kind of credential or feed, made by a member, then the member removed
// (and, separately, demoted): it stops, or does no more than the new role allows, from the next
// request or delivery on. The kinds come from the contract (every create route that hands out
// authority, `delegation`), plus what the sign-in pages make (sessions, approvals, the portal's
// endpoints); a create route without an entry here fails the walk.
// ---------------------------------------------------------------------------------------------

type Maker = Awaited<ReturnType<typeof member>>;

interface Probe {
  /** Whether it still works (reads, delivers, stays pending, stays signed in). */
  works(): Promise<boolean>;
  /** For a credential: whether it may still write (a viewer may not). */
  canWrite?(): Promise<boolean>;
}

interface Lifecycle {
  /** The role that may make it (a developer, or an admin for what only admins make). */
  role: Role;
  /** Makes one as `maker`. */
  make(maker: Maker): Promise<Probe>;
  /** After the demotion: still working within the new role, or stopped. */
  demoted: 'narrowed' | 'stopped';
}

/** Whether `token` may read students, and whether it may still write (create a course). */
async function reads(token: string) {
  return (await typedClient(server, token).students.list()).status === 200;
}
async function writes(token: string) {
  const res = await typedClient(server, token).courses.create({
    body: { code: `W-${++people}`, title: 'Probe' },
  });
  return res.status === 201;
}

/** A delivery probe: an event of the organization, and whether the endpoint got it. */
async function delivers(receiver: Receiver): Promise<boolean> {
  const before = receiver.ofType('student.created').length;
  await asOperator().students.create({
    body: { student_number: `LW-${++people}`, first_name: 'Walk', last_name: 'Probe' },
  });
  try {
    await waitFor(() => receiver.ofType('student.created').length > before, { timeoutMs: 2000 });
    return true;
  } catch {
    return false;
  }
}

async function endpointProbe(create: (url: string) => Promise<string>) {
  const receiver = await startReceiver();
  receivers.push(receiver);
  await create(receiver.url);
  // Viewers read every resource that has events, so a demotion leaves deliveries as they were.
  return { works: () => delivers(receiver) };
}

async function clientCredentialsToken(
  app: { id: string; client_secret: string | null },
  scope: string,
) {
  const res = await fetch(`${server.url}/oauth/token`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/x-www-form-urlencoded',
      Authorization: `Basic ${Buffer.from(`${app.id}:${app.client_secret}`).toString('base64')}`,
    },
    body: new URLSearchParams({ grant_type: 'client_credentials', scope }),
  });
  return res.ok ? ((await res.json()) as { access_token: string }).access_token : null;
}

const LIFECYCLES: Record<string, Lifecycle> = {
  'personalAccessTokens.create': {
    role: 'developer',
    make: async (maker) => {
      const made = expectStatus(
        await maker.api.personalAccessTokens.create({
          body: { name: 'walk', scopes: ['students:read', 'courses:write'] },
        }),
        201,
      ).body.token;
      return { works: () => reads(made), canWrite: () => writes(made) };
    },
    demoted: 'narrowed',
  },
  'oauthClients.create': {
    role: 'developer',
    make: async (maker) => {
      const app = expectStatus(
        await maker.api.oauthClients.create({
          body: {
            name: 'Walk app',
            type: 'confidential',
            scopes: ['students:read', 'courses:write'],
            grant_types: ['client_credentials'],
          },
        }),
        201,
      ).body;
      // Each probe asks for what it uses: a scope the client no longer has is refused.
      const probe = async (scope: string, use: (token: string) => Promise<boolean>) => {
        const token = await clientCredentialsToken(app, scope);
        return token !== null && use(token);
      };
      return {
        works: () => probe('students:read', reads),
        canWrite: () => probe('courses:write', writes),
      };
    },
    demoted: 'narrowed',
  },
  'webhookEndpoints.create': {
    role: 'developer',
    make: (maker) =>
      endpointProbe(async (url) => {
        await maker.api.webhookEndpoints.create({ body: { url, events: ['student.created'] } });
        return url;
      }),
    demoted: 'narrowed',
  },
  'invitations.create': {
    role: 'admin',
    make: async (maker) => {
      const invitation = expectStatus(
        await maker.api.invitations.create({
          body: { email: `walk-invitee${++people}@harbour.example`, role: 'admin' },
        }),
        201,
      ).body;
      const pending = async () =>
        expectStatus(await asOperator().invitations.list(), 200).body.data.some(
          (i) => i.id === invitation.id,
        );
      return { works: pending };
    },
    // Demoted to developer, an admin can no longer give the admin role.
    demoted: 'stopped',
  },
  // What the sign-in pages make: an app approved by the member (a grant and its tokens).
  'sign-in: an approved app': {
    role: 'developer',
    make: async (maker) => {
      const app = await server.createOAuthClient(orgId, {
        type: 'confidential',
        redirect_uris: [REDIRECT_URI],
      });
      const tokens = await approve(
        { id: app.id, secret: app.client_secret },
        maker.email,
        'students:read courses:write',
      );
      return {
        works: () => reads(tokens.access_token),
        canWrite: () => writes(tokens.access_token),
      };
    },
    demoted: 'narrowed',
  },
  // The portal's sign-in session and token.
  'sign-in: a portal session': {
    role: 'developer',
    make: async (maker) => {
      const { token, browser } = await portalSignIn(maker.email);
      // A demoted member stays signed in, as what the new role allows.
      return { works: async () => (await reads(token)) && !(await asksForPassword(browser)) };
    },
    demoted: 'narrowed',
  },
  'sign-in: a webhook endpoint made in the portal': {
    role: 'developer',
    make: async (maker) => {
      const { token } = await portalSignIn(maker.email);
      return endpointProbe(async (url) => {
        await typedClient(server, token).webhookEndpoints.create({
          body: { url, events: ['student.created'] },
        });
        return url;
      });
    },
    demoted: 'narrowed',
  },
};

describe('the lifecycle walk: what a member made stops with their access', () => {
  it('has an entry for every create route that hands out authority', () => {
    const fromContract = Object.entries(contract)
      .flatMap(([resource, routes]) =>
        Object.entries(routes as Record<string, AppRoute>).map(([name, route]) => ({
          key: `${resource}.${name}`,
          route,
        })),
      )
      .filter(
        ({ route }) =>
          route.method === 'POST' &&
          /^\/v1\/[a-z_]+$/.test(route.path) &&
          ['credential', 'webhook_endpoint'].includes(operationMetadata(route)?.delegation ?? ''),
      )
      .map(({ key }) => key);
    expect(fromContract.length).toBeGreaterThanOrEqual(4);
    expect(fromContract.filter((key) => !(key in LIFECYCLES))).toEqual([]);
  });

  describe.each(Object.entries(LIFECYCLES))('%s', (_kind, lifecycle) => {
    it('stops when its member is removed', async () => {
      const maker = await member(lifecycle.role);
      const probe = await lifecycle.make(maker);
      expect(await probe.works()).toBe(true);
      await remove(maker.id);
      expect(await probe.works()).toBe(false);
    });

    it('does no more than the new role allows when its member is demoted', async () => {
      const maker = await member(lifecycle.role);
      const probe = await lifecycle.make(maker);
      expect(await probe.works()).toBe(true);
      if (probe.canWrite) expect(await probe.canWrite()).toBe(true);
      await demote(maker.id, lifecycle.role === 'admin' ? 'developer' : 'viewer');
      expect(await probe.works()).toBe(lifecycle.demoted === 'narrowed');
      // A viewer writes nothing: a credential of theirs may read on, not write.
      if (probe.canWrite) expect(await probe.canWrite()).toBe(false);
    });
  });
});
