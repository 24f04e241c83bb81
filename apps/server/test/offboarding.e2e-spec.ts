/**
 * Offboarding and sessions (issue 31): nothing a member made or approved outlives their access,
 * acting on a credential needs being its owner or an admin, signing out signs out, and password
 * checks are limited and recorded. One regression test per finding, on SQLite and PostgreSQL.
 * This file has the webhook endpoints and the lifecycle walk; offboarding-access the invitations
 * and OAuth clients; offboarding-sessions signing in and out and passwords.
 */
import { contract, operationMetadata, type Role } from '@platform/contract';
import type { AppRoute } from '@ts-rest/core';
import { expectStatus, typedClient } from './support/api';
import {
  approve,
  asksForPassword,
  asOperator,
  demote,
  member,
  nextPerson,
  orgId,
  portalSignIn,
  receivers,
  REDIRECT_URI,
  remove,
  server,
  setUpOffboarding,
} from './support/offboarding';
import { type Receiver, startReceiver, waitFor } from './support/receiver';

setUpOffboarding();

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
// ---------------------------------------------------------------------------------------------
// The lifecycle walk: every kind of credential or feed, made by a member, then the member removed
// (and, separately, demoted): it stops, or does no more than the new role allows, from the next
// request or delivery on. The kinds come from the contract (every route that creates, 201, what
// hands out authority, `delegation`), plus what the sign-in pages make (sessions, approvals, the portal's
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
    body: { code: `W-${nextPerson()}`, title: 'Probe' },
  });
  return res.status === 201;
}

/** A delivery probe: an event of the organization, and whether the endpoint got it. */
async function delivers(receiver: Receiver): Promise<boolean> {
  const before = receiver.ofType('student.created').length;
  await asOperator().students.create({
    body: { student_number: `LW-${nextPerson()}`, first_name: 'Walk', last_name: 'Probe' },
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

/** One sandbox of the organization, made on first use (an organization has at most five). */
let walkSandbox: Promise<string> | undefined;
function sandboxId() {
  walkSandbox ??= asOperator()
    .sandboxes.create({ body: { name: 'Walk', students: 0 } })
    .then((res) => expectStatus(res, 201).body.id);
  return walkSandbox;
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
  // A member's token of a sandbox: their role in the parent caps it, and it dies with it.
  'sandboxes.createToken': {
    role: 'developer',
    make: async (maker) => {
      const made = expectStatus(
        await maker.api.sandboxes.createToken({
          params: { id: await sandboxId() },
          body: { name: 'walk', scopes: ['students:read', 'courses:write'] },
        }),
        201,
      ).body;
      // What a removal would stop is listed where the admin looks before removing them.
      const listed = expectStatus(
        await asOperator().members.credentials({ params: { id: maker.id } }),
        200,
      ).body.personal_access_tokens;
      expect(listed.map((t) => t.id)).toContain(made.id);
      return { works: () => reads(made.token), canWrite: () => writes(made.token) };
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
          body: { email: `walk-invitee${nextPerson()}@harbour.example`, role: 'admin' },
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
          201 in route.responses &&
          ['credential', 'webhook_endpoint'].includes(operationMetadata(route)?.delegation ?? ''),
      )
      .map(({ key }) => key);
    expect(fromContract.length).toBeGreaterThanOrEqual(5);
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
