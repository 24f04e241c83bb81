/**
 * "My sessions" (issue 46): a member sees where they are signed in and which apps they approved,
 * with the device and address each was last used from, and signs out any one, or every other
 * browser. Browsers sign in on the real sign-in pages; apps through the real consent page.
 */
import type { UserSession } from '@platform/contract';
import { Browser } from '../src/testing';
import { expectStatus, typedClient } from './support/api';
import {
  approve,
  asksForPassword,
  asOperator,
  member,
  orgId,
  portalSignIn,
  REDIRECT_URI,
  server,
  setUpOffboarding,
} from './support/offboarding';

setUpOffboarding();

const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0';
const SAFARI =
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_2) AppleWebKit/605.1.15 Version/17.2 Safari/605.1.15';
const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 Chrome/131.0 Safari';

const signedIn = (email: string, userAgent: string) =>
  portalSignIn(email, new Browser(server.url, userAgent));

async function sessionsOf(token: string): Promise<UserSession[]> {
  return expectStatus(await typedClient(server, token).user.listSessions(), 200).body.data;
}

const canRead = async (token: string) =>
  (await typedClient(server, token).user.retrieve()).status === 200;

async function registeredApp(name: string) {
  const app = await server.createOAuthClient(orgId, {
    name,
    type: 'confidential',
    redirect_uris: [REDIRECT_URI],
  });
  return { id: app.id, secret: app.client_secret };
}

describe('my sessions', () => {
  it('lists each browser with its device, address and times, and marks the calling one', async () => {
    const someone = await member('developer');
    const before = Date.now();
    const firefox = await signedIn(someone.email, FIREFOX);
    const safari = await signedIn(someone.email, SAFARI);

    const sessions = await sessionsOf(firefox.token);
    expect(sessions).toHaveLength(2);
    const mine = sessions.find((s) => s.current)!;
    const other = sessions.find((s) => !s.current)!;
    expect(mine).toMatchObject({ object: 'session', type: 'browser', app: null, device: FIREFOX });
    expect(other).toMatchObject({ type: 'browser', device: SAFARI, current: false });
    for (const session of sessions) {
      expect(session.id).toMatch(/^ses_[0-9A-HJKMNP-TV-Z]{26}$/);
      expect(session.ip).toBe('127.0.0.1');
      expect(Date.parse(session.last_active_at!)).toBeGreaterThanOrEqual(before - 1000);
      expect(Date.parse(session.signed_in_at!)).toBeGreaterThanOrEqual(before - 1000);
    }
    // The most recently active first; the same ids from the other browser, which is current there.
    expect(sessions[0]!.device).toBe(SAFARI);
    const fromSafari = await sessionsOf(safari.token);
    expect(fromSafari.map((s) => [s.id, s.current])).toEqual([
      [other.id, true],
      [mine.id, false],
    ]);
    // A personal access token is no browser: none is current.
    expect((await sessionsOf(someone.token)).every((s) => !s.current)).toBe(true);
  });

  it('signs out one browser: its token stops and it must sign in again; the rest stay', async () => {
    const someone = await member('developer');
    const firefox = await signedIn(someone.email, FIREFOX);
    const safari = await signedIn(someone.email, SAFARI);
    const target = (await sessionsOf(firefox.token)).find((s) => s.device === SAFARI)!;

    const revoked = await typedClient(server, firefox.token).user.revokeSession({
      params: { id: target.id },
    });
    expect(expectStatus(revoked, 200).body).toEqual({
      id: target.id,
      object: 'session',
      deleted: true,
    });

    expect(await canRead(safari.token)).toBe(false);
    expect(await asksForPassword(safari.browser)).toBe(true);
    expect(await canRead(firefox.token)).toBe(true);
    expect(await asksForPassword(firefox.browser)).toBe(false);
    expect((await sessionsOf(firefox.token)).map((s) => s.device)).toEqual([FIREFOX]);

    const log = expectStatus(
      await asOperator().auditEvents.list({ query: { action: 'user.session_revoked' } }),
      200,
    ).body.data.find((e) => e.target.id === someone.id);
    expect(log?.changes).toMatchObject({ session: [target.id, null], type: 'browser' });
    // Gone: a second sign-out of it is a 404, as is another member's session.
    const again = await typedClient(server, firefox.token).user.revokeSession({
      params: { id: target.id },
    });
    expect(again.status).toBe(404);
  });

  it("never signs out another member's session", async () => {
    const someone = await member('admin');
    const other = await member('viewer');
    await signedIn(other.email, CHROME);
    const theirs = (await sessionsOf(other.token))[0]!;
    const attempt = await someone.api.user.revokeSession({
      params: { id: theirs.id },
    });
    expect(attempt.status).toBe(404);
    expect((await sessionsOf(other.token)).map((s) => s.id)).toEqual([theirs.id]);
    expect((await sessionsOf(someone.token)).some((s) => s.id === theirs.id)).toBe(false);
  });

  it('lists an approved app and withdraws it: every token it holds stops', async () => {
    const someone = await member('developer');
    const browser = await signedIn(someone.email, FIREFOX);
    const app = await registeredApp('Gradebook sync');
    const tokens = await approve(app, someone.email, 'students:read');

    const listed = (await sessionsOf(browser.token)).find((s) => s.type === 'app')!;
    expect(listed).toMatchObject({
      app: { id: app.id, name: 'Gradebook sync' },
      signed_in_at: null,
      current: false,
    });
    expect(listed.last_active_at).not.toBeNull();
    // The app's own token sees itself as the current session.
    expect((await sessionsOf(tokens.access_token)).find((s) => s.current)?.id).toBe(listed.id);

    expectStatus(
      await typedClient(server, browser.token).user.revokeSession({
        params: { id: listed.id },
      }),
      200,
    );
    expect(await canRead(tokens.access_token)).toBe(false);
    const refreshed = await fetch(`${server.url}/oauth/token`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/x-www-form-urlencoded',
        Authorization: `Basic ${Buffer.from(`${app.id}:${app.secret}`).toString('base64')}`,
      },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: tokens.refresh_token!,
      }),
    });
    expect(refreshed.status).toBe(400);
    expect(((await refreshed.json()) as { error: string }).error).toBe('invalid_grant');
    // The browsers stay signed in: the portal's, and the one the app was approved in.
    expect(await canRead(browser.token)).toBe(true);
    expect((await sessionsOf(browser.token)).map((s) => s.type)).toEqual(['browser', 'browser']);
  });

  it('signs out every other browser, keeping the caller and approved apps', async () => {
    const someone = await member('developer');
    const firefox = await signedIn(someone.email, FIREFOX);
    const safari = await signedIn(someone.email, SAFARI);
    const chrome = await signedIn(someone.email, CHROME);
    const app = await registeredApp('Timetable');
    const tokens = await approve(app, someone.email, 'students:read');

    const remaining = expectStatus(
      await typedClient(server, firefox.token).user.signOutOtherSessions(),
      200,
    ).body;
    expect(remaining.data.map((s) => [s.type, s.device ?? s.app?.name, s.current])).toEqual([
      ['browser', FIREFOX, true],
      ['app', expect.any(String), false],
    ]);
    expect(await canRead(firefox.token)).toBe(true);
    expect(await canRead(tokens.access_token)).toBe(true);
    for (const other of [safari, chrome]) {
      expect(await canRead(other.token)).toBe(false);
      expect(await asksForPassword(other.browser)).toBe(true);
    }
    expect(await sessionsOf(firefox.token)).toEqual(remaining.data);

    // With a personal access token no browser is the caller's: every one ends.
    const all = expectStatus(await someone.api.user.signOutOtherSessions(), 200);
    expect(all.body.data.map((s) => s.type)).toEqual(['app']);
    expect(await canRead(firefox.token)).toBe(false);
  });

  it('refuses a token that acts for no member', async () => {
    const { token } = await server.createToken(orgId, ['all']);
    expect((await typedClient(server, token).user.listSessions()).status).toBe(403);
  });
});
