import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Browser, formAction } from '../src/testing';
import { PORTAL_CLIENT_ID } from '../src/oauth/portal-client';
import { expectStatus, typedClient } from './support/api';
import { RequestLogWriter } from '../src/request-logs/request-log-writer';
import { startServer, type TestServer } from './support/server';

const PASSWORD = 'correct horse battery staple';

/**
 * The server's side of the portal (apps/portal): serving its build under /portal, and the
 * first-party OAuth client it signs members in with. The portal itself is tested in a browser
 * in apps/portal.
 */
describe('the portal: serving and sign-in', () => {
  let server: TestServer;
  let dist: string;

  beforeAll(async () => {
    dist = mkdtempSync(path.join(tmpdir(), 'portal-dist-'));
    mkdirSync(path.join(dist, 'assets'));
    writeFileSync(
      path.join(dist, 'index.html'),
      '<!doctype html><title>portal</title><script type="module" src="/portal/assets/index-AbC123.js"></script>',
    );
    writeFileSync(path.join(dist, 'assets', 'index-AbC123.js'), 'console.log("portal")');
    server = await startServer({ PORTAL_DIST_DIR: dist });
  });

  afterAll(async () => {
    await server.close();
    rmSync(dist, { recursive: true, force: true });
  });

  describe('serving under /portal', () => {
    it('answers every app path with index.html, revalidated each time, under a strict CSP', async () => {
      for (const route of ['/portal', '/portal/', '/portal/tokens', '/portal/webhooks/whe_1']) {
        const res = await fetch(`${server.url}${route}`);
        expect({ route, status: res.status }).toEqual({ route, status: 200 });
        expect(res.headers.get('content-type')).toMatch(/^text\/html/);
        expect(res.headers.get('cache-control')).toBe('no-cache');
        const csp = res.headers.get('content-security-policy')!;
        expect(csp).toContain("script-src 'self'");
        expect(csp).toContain("connect-src 'self'");
        expect(csp).toContain("frame-ancestors 'none'");
        expect(csp).not.toContain('unsafe-inline');
        await expect(res.text()).resolves.toContain('index-AbC123.js');
      }
    });

    it('caches hashed assets for a year, and a missing asset is a 404, not the page', async () => {
      const asset = await fetch(`${server.url}/portal/assets/index-AbC123.js`);
      expect(asset.status).toBe(200);
      expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect(asset.headers.get('content-type')).toMatch(/javascript/);
      const missing = await fetch(`${server.url}/portal/assets/index-Gone99.js`);
      expect(missing.status).toBe(404);
      await expect(missing.text()).resolves.not.toContain('<title>portal</title>');
    });

    it('without a build, answers 503 saying how to build it', async () => {
      const index = path.join(dist, 'index.html');
      unlinkSync(index);
      try {
        const res = await fetch(`${server.url}/portal/tokens`);
        expect(res.status).toBe(503);
        expect(res.headers.get('cache-control')).toBe('no-store');
        await expect(res.text()).resolves.toContain('pnpm --filter @platform/portal build');
      } finally {
        writeFileSync(index, '<!doctype html><title>portal</title>');
      }
    });

    it('counts its requests in the metrics under one route, not one per path', async () => {
      await fetch(`${server.url}/portal/webhooks/whe_metrics`);
      const metrics = await (await fetch(`${server.url}/metrics`)).text();
      expect(metrics).toMatch(/route="\/portal\/\*",method="GET",status="200"/);
      expect(metrics).not.toContain('whe_metrics');
    });

    it('does not take over the API: /v1 paths still answer as before', async () => {
      const res = await typedClient(server).students.list();
      expect(res.status).toBe(401);
    });
  });

  describe('the first-party portal client', () => {
    /** The portal's sign-in, as its page does it: PKCE, the server's login page, the callback. */
    async function signIn(email: string) {
      const verifier = randomBytes(32).toString('base64url');
      const state = randomBytes(16).toString('base64url');
      const redirectUri = `${server.url}/portal/callback`;
      const url = new URL('/oauth/authorize', server.url);
      url.search = new URLSearchParams({
        response_type: 'code',
        client_id: PORTAL_CLIENT_ID,
        redirect_uri: redirectUri,
        scope: 'students:read tokens:read tokens:write webhooks:read',
        state,
        code_challenge: createHash('sha256').update(verifier).digest('base64url'),
        code_challenge_method: 'S256',
      }).toString();
      const browser = new Browser(server.url);
      const login = await browser.follow(url.toString());
      expect(login.status).toBe(200);
      expect(login.body).toContain('Sign in to continue to Platform portal');
      // After the password, straight back to the portal: no consent page for the first party.
      const back = await browser.follow(formAction(login.body, '/login'), {
        method: 'POST',
        form: { email, password: PASSWORD },
      });
      const callback = new URL(back.url);
      expect(callback.origin + callback.pathname).toBe(redirectUri);
      expect(callback.searchParams.get('state')).toBe(state);
      const token = await fetch(`${server.url}/oauth/token`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code: callback.searchParams.get('code')!,
          redirect_uri: redirectUri,
          client_id: PORTAL_CLIENT_ID,
          code_verifier: verifier,
        }),
      });
      expect(token.status).toBe(200);
      const body = (await token.json()) as { access_token: string; refresh_token?: string };
      expect(body.refresh_token).toBeUndefined();
      return body.access_token;
    }

    it('signs in a member of any organization, with a token for their own organization', async () => {
      const [a, b] = [await server.createOrganization(), await server.createOrganization()];
      await server.createUser(a.id, 'ada@a-school.test', PASSWORD);
      await server.createUser(b.id, 'bob@b-school.test', PASSWORD);
      await server.insertStudents(a.id, 3);
      await server.insertStudents(b.id, 2);
      for (const [org, email, students] of [
        [a, 'ada@a-school.test', 3],
        [b, 'bob@b-school.test', 2],
      ] as const) {
        const token = await signIn(email);
        const api = typedClient(server, token);
        const info = expectStatus(await api.token.retrieve(), 200);
        expect(info.body).toMatchObject({
          type: 'oauth_access_token',
          organization_id: org.id,
          client_id: PORTAL_CLIENT_ID,
          scopes: ['students:read', 'tokens:read', 'tokens:write', 'webhooks:read'],
        });
        const list = expectStatus(await api.students.list(), 200);
        expect(list.body.meta.total).toBe(students);
      }
    });

    it('makes personal tokens that outlive the one-hour session (the member acts for themselves)', async () => {
      const org = await server.createOrganization();
      await server.createUser(org.id, 'cy@c-school.test', PASSWORD);
      const token = await signIn('cy@c-school.test');
      const created = expectStatus(
        await typedClient(server, token).personalAccessTokens.create({
          body: { name: 'sync', scopes: ['students:read'], expires_at: null },
        }),
        201,
      );
      expect(created.body.expires_at).toBeNull();
      const used = await typedClient(server, created.body.token).students.list();
      expect(used.status).toBe(200);
    });

    it("has a rate-limit budget of its own, apart from the organization's API tokens", async () => {
      const org = await server.createOrganization({ rateLimitPerMinute: 10 });
      await server.createUser(org.id, 'di@d-school.test', PASSWORD);
      const portal = typedClient(server, await signIn('di@d-school.test'));
      const { token } = await server.createToken(org.id, ['all']);
      const api = typedClient(server, token);
      for (let i = 0; i < 10; i++) expect((await api.students.list()).status).toBe(200);
      expect((await api.students.list()).status).toBe(429);
      const fromPortal = expectStatus(await portal.students.list(), 200);
      expect(fromPortal.headers.get('x-ratelimit-remaining')).toBe('9');
      expect((await api.students.list()).status).toBe(429);
    });

    it('shows its own calls apart in request logs and usage: hidden unless source=portal', async () => {
      const org = await server.createOrganization();
      await server.createUser(org.id, 'ed@e-school.test', PASSWORD, { role: 'admin' });
      const portal = typedClient(server, await signIn('ed@e-school.test'));
      const { token } = await server.createToken(org.id, ['all']);
      const api = typedClient(server, token);
      const fromApi = await api.students.list();
      const fromPortal = await portal.students.list();
      await server.app.get(RequestLogWriter).flush();
      const ids = async (query: Record<string, string>) =>
        expectStatus(
          await api.requestLogs.list({ query: { route: '/v1/students', ...query } }),
          200,
        ).body.data.map((entry) => entry.request_id);

      expect(await ids({})).toEqual([fromApi.headers.get('x-request-id')]);
      expect(await ids({ source: 'portal' })).toEqual([fromPortal.headers.get('x-request-id')]);
      expect(await ids({ source: 'api,portal' })).toEqual([
        fromPortal.headers.get('x-request-id'),
        fromApi.headers.get('x-request-id'),
      ]);
      const successes = async (source?: 'api' | 'portal') => {
        await server.app.get(RequestLogWriter).flush();
        const usage = await api.usage.retrieve({ query: source ? { source } : {} });
        return expectStatus(usage, 200).body.requests.reduce((sum, hour) => sum + hour.success, 0);
      };
      // The API token's: the students list and the three request-log lists; the portal's: one.
      expect(await successes()).toBe(4);
      expect(await successes('portal')).toBe(1);
      expect(await successes('api')).toBe(6); // and the two usage reads since
    });

    it('refuses a redirect URI other than the portal’s own callback', async () => {
      const url = new URL('/oauth/authorize', server.url);
      url.search = new URLSearchParams({
        response_type: 'code',
        client_id: PORTAL_CLIENT_ID,
        redirect_uri: 'https://evil.school.test/portal/callback',
        scope: 'students:read',
        state: 'x',
        code_challenge: createHash('sha256').update('v'.repeat(43)).digest('base64url'),
        code_challenge_method: 'S256',
      }).toString();
      const res = await new Browser(server.url).follow(url.toString());
      expect(res.status).toBe(400);
      expect(res.body).toContain('redirect_uri');
    });
  });
});
