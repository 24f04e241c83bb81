/**
 * Issue 15's self-service pages in Chromium against the real server (SQLite; PostgreSQL with
 * TEST_DATABASE_URL, Redis with TEST_REDIS_URL): an admin invites a developer, who accepts on
 * the server's page, signs in and makes a token; the admin demotes them to viewer, and the
 * server (not only the portal) refuses them a token; the audit log, organization and account
 * pages. Each member has a browser context of their own (the sign-in cookie is per member).
 * axe-core checks every page.
 */
import { startTestServer, type TestServer } from '@platform/server/testing';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import {
  launchChromium,
  loopbackContext,
  screenshot,
  allViolations,
  expectPortalBuilt,
} from './browser';
import { apiCaller } from './product-checks';

const ADMIN_EMAIL = 'head@self-service-school.test';
const ADMIN_PASSWORD = 'correct horse battery staple';
const MEMBER_EMAIL = 'dev@self-service-school.test';
const MEMBER_PASSWORD = 'a long enough member password';
const MEMBER_NEW_PASSWORD = 'another long enough password';
const RATE_LIMIT = 500;

let server: TestServer;
let browser: Browser;
const contexts: BrowserContext[] = [];
const refused: string[] = [];
let admin: Page;
let member: Page;

beforeAll(async () => {
  expectPortalBuilt();
  server = await startTestServer({
    postgresAdminUrl: process.env.TEST_DATABASE_URL || undefined,
    redisUrl: process.env.TEST_REDIS_URL || undefined,
  });
  const organization = await server.createOrganization({
    name: 'Self-service School',
    rateLimitPerMinute: RATE_LIMIT,
  });
  await server.createUser(organization.id, ADMIN_EMAIL, ADMIN_PASSWORD, { role: 'admin' });
  browser = await launchChromium();
  admin = await newPage();
}, 120_000);

afterAll(async () => {
  for (const context of contexts) await context.close();
  await browser?.close();
  await server?.close();
});

afterEach(() => {
  // Loopback only: the browser asked for nothing outside.
  expect(refused).toEqual([]);
  expect(dialogs).toEqual([]);
});

/** Native dialogs (window.confirm and the like): the portal asks in its own, so none. */
const dialogs: string[] = [];

/** A fresh browser (no sign-in cookie); a native dialog is recorded (and fails the test). */
async function newPage(): Promise<Page> {
  const context = await loopbackContext(browser, refused);
  contexts.push(context);
  const page = await context.newPage();
  page.on('dialog', (dialog) => {
    dialogs.push(dialog.message());
    void dialog.dismiss();
  });
  return page;
}

function portal(pathname = ''): string {
  return `${server.url}/portal${pathname}`;
}

async function expectAccessible(page: Page, name: string): Promise<void> {
  expect({ page: name, violations: await allViolations(page) }).toEqual({
    page: name,
    violations: [],
  });
}

/** Axe at 1280 and 375 pixels, light and dark; the page is left at 1280, light. */
async function expectAccessibleEverywhere(page: Page, name: string): Promise<void> {
  for (const width of [1280, 375]) {
    await page.setViewportSize({ width, height: width === 1280 ? 900 : 800 });
    for (const colorScheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme });
      await expectAccessible(page, `${name} (${width} px, ${colorScheme})`);
    }
  }
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.emulateMedia({ colorScheme: 'light' });
}

/** Signs in through the server's OAuth page; resolves once the portal shows `pathname`. */
async function signIn(page: Page, email: string, password: string, pathname = '/tokens') {
  await page.goto(portal(pathname));
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(/\/oauth\/interaction\//);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(portal(pathname));
}

async function portalToken(page: Page): Promise<string> {
  const raw = await page.evaluate(() => sessionStorage.getItem('platform.portal.session'));
  return (JSON.parse(raw!) as { accessToken: string }).accessToken;
}

async function navLinks(page: Page): Promise<string[]> {
  await page.getByRole('navigation', { name: 'Portal' }).getByRole('link').first().waitFor();
  return page.getByRole('navigation', { name: 'Portal' }).getByRole('link').allTextContents();
}

async function goTo(page: Page, link: string, heading: string): Promise<void> {
  await page.getByRole('navigation', { name: 'Portal' }).getByRole('link', { name: link }).click();
  await page.getByRole('heading', { level: 1, name: heading }).waitFor();
}

/** The text a sighted user reads (without the words only screen readers get). */
function visibleText(locator: Locator): Promise<string> {
  return locator.evaluate((element) => {
    const copy = element.cloneNode(true) as Element;
    for (const hidden of copy.querySelectorAll('.visually-hidden')) hidden.remove();
    return (copy.textContent ?? '').replace(/\s+/g, ' ').trim();
  });
}

const api = (token: string, pathname: string, init: RequestInit = {}) =>
  apiCaller(server)(token, pathname, init);

describe('self-service in the portal', () => {
  let acceptUrl = '';

  test('an admin sees every page and invites a developer: the link is shown once, with a copy button', async () => {
    await signIn(admin, ADMIN_EMAIL, ADMIN_PASSWORD);
    expect(await navLinks(admin)).toEqual([
      'Tokens',
      'Webhooks',
      'OAuth apps',
      'Members',
      'Exports',
      'Imports',
      'Audit log',
      'Request logs',
      'Usage',
      'Sandboxes',
      'Organization',
      'Account',
    ]);
    await goTo(admin, 'Members', 'Members');
    await admin.getByRole('row', { name: new RegExp(ADMIN_EMAIL) }).waitFor();
    await admin.getByText('No pending invitations.').waitFor();
    await admin.getByLabel('Email').fill(MEMBER_EMAIL);
    await admin.getByLabel('Role', { exact: true }).selectOption('developer');
    await admin.getByRole('button', { name: 'Create invitation' }).click();
    await admin.getByRole('heading', { name: `Invitation for ${MEMBER_EMAIL} created` }).waitFor();
    acceptUrl = await admin.getByLabel('Invitation link', { exact: true }).inputValue();
    expect(acceptUrl).toMatch(new RegExp(`^${server.url}/invitations/accept\\?token=`));
    await admin.getByRole('button', { name: 'Copy Invitation link' }).click();
    await admin.getByText('Copied.').waitFor();
    await expect(admin.evaluate(() => navigator.clipboard.readText())).resolves.toBe(acceptUrl);
    const pending = admin.getByRole('row', { name: new RegExp(MEMBER_EMAIL) });
    await expect(pending.textContent()).resolves.toContain('developer');
    await expectAccessible(admin, 'members (invitation shown)');
    await screenshot(admin, 'members');
    // Shown once: the list of pending invitations never carries the link.
    const listed = await api(await portalToken(admin), '/v1/invitations').then((r) => r.text());
    expect(listed).not.toContain(acceptUrl.split('token=')[1]);

    // Resent (this server sends no mail): a new link, shown once; the old one stops working.
    await admin.getByRole('button', { name: `Resend invitation to ${MEMBER_EMAIL}` }).click();
    await admin
      .getByText(`Invitation for ${MEMBER_EMAIL} renewed: its new link is above.`)
      .waitFor();
    const renewed = await admin.getByLabel('Invitation link', { exact: true }).inputValue();
    expect(renewed).toMatch(new RegExp(`^${server.url}/invitations/accept\\?token=`));
    expect(renewed).not.toBe(acceptUrl);
    expect((await fetch(acceptUrl)).status).toBe(404);
    acceptUrl = renewed;
  });

  test('the server’s refusal is shown: demoting the only admin is a 409 with its reason', async () => {
    await admin.getByLabel(`Role of ${ADMIN_EMAIL}`).selectOption('developer');
    await admin.getByRole('button', { name: `Change role of ${ADMIN_EMAIL}` }).click();
    await admin
      .getByRole('dialog', { name: `Make ${ADMIN_EMAIL} a developer?` })
      .getByRole('button', { name: 'Make developer' })
      .click();
    const alert = admin.getByRole('alert');
    await alert.waitFor();
    await expect(alert.textContent()).resolves.toMatch(/another member an admin first/i);
  });

  let memberPat = '';

  test('the invitee accepts in the browser, signs in, creates a token, and it answers 200', async () => {
    member = await newPage();
    await member.goto(acceptUrl);
    await member.getByRole('heading', { level: 1, name: 'Join your organization' }).waitFor();
    await expectAccessible(member, 'invitation accept page');
    await member.locator('#name').fill('Dana Developer');
    await member.locator('#password').fill(MEMBER_PASSWORD);
    await member.locator('#password_confirmation').fill(MEMBER_PASSWORD);
    await member.getByRole('button', { name: 'Accept invitation' }).click();
    // The server sends the new member to the portal, where they sign in.
    await member.waitForURL(portal('/'));
    await signIn(member, MEMBER_EMAIL, MEMBER_PASSWORD);
    await member.getByRole('heading', { level: 1, name: 'Personal access tokens' }).waitFor();
    // A developer reads members but neither manages them nor reads the audit log.
    expect(await navLinks(member)).toEqual([
      'Tokens',
      'Webhooks',
      'OAuth apps',
      'Members',
      'Exports',
      'Imports',
      'Request logs',
      'Usage',
      'Sandboxes',
      'Organization',
      'Account',
    ]);
    await member.getByRole('button', { name: 'New token' }).click();
    const form = member.getByRole('dialog', { name: 'Create a token' });
    await form.getByLabel('Name').fill('developer sync');
    await form.getByRole('radio', { name: 'Custom' }).check();
    await form.getByRole('checkbox', { name: 'students:read' }).check();
    await form.getByRole('button', { name: 'Create token' }).click();
    await member.getByRole('heading', { name: 'Token “developer sync” created' }).waitFor();
    memberPat = await member.getByLabel('Token', { exact: true }).inputValue();
    const students = await api(memberPat, '/v1/students');
    expect(students.status).toBe(200);

    await goTo(member, 'Members', 'Members');
    await member.getByRole('row', { name: new RegExp(MEMBER_EMAIL) }).waitFor();
    await expect(
      member.getByRole('button', { name: /Change role|Remove|Create invitation/ }).count(),
    ).resolves.toBe(0);
    await expectAccessible(member, 'members (developer)');
  });

  test('the admin changes the member to viewer; the change and the invitation’s end show in the list', async () => {
    await admin.reload();
    await admin.getByRole('heading', { level: 1, name: 'Members' }).waitFor();
    await admin.getByRole('row', { name: new RegExp(MEMBER_EMAIL) }).waitFor();
    await admin.getByText('No pending invitations.').waitFor();
    const roleSelect = admin.getByLabel(`Role of ${MEMBER_EMAIL}`);
    const changeRole = admin.getByRole('button', { name: `Change role of ${MEMBER_EMAIL}` });
    const dialog = admin.getByRole('dialog', { name: `Make ${MEMBER_EMAIL} a viewer?` });
    // Cancelled: the select goes back to the role the member has, not the one not saved.
    await roleSelect.selectOption('viewer');
    await changeRole.click();
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await expect(roleSelect.inputValue()).resolves.toBe('developer');
    await expect(changeRole.isDisabled()).resolves.toBe(true);
    await expectAccessibleEverywhere(admin, 'members, demotion cancelled');

    await roleSelect.selectOption('viewer');
    await changeRole.click();
    // The confirmation names what the demotion narrows: the token the member made.
    await expect(dialog.textContent()).resolves.toContain(
      'is cut to that role: 1 personal access token (',
    );
    await dialog.getByRole('button', { name: 'Make viewer' }).click();
    await admin.getByText(`${MEMBER_EMAIL} is now a viewer.`).waitFor();
    const row = admin.getByRole('row', { name: new RegExp(MEMBER_EMAIL) });
    await expect(row.getByRole('cell').nth(0).textContent()).resolves.toBe('Dana Developer');
    await expect(admin.getByLabel(`Role of ${MEMBER_EMAIL}`).inputValue()).resolves.toBe('viewer');
  });

  let viewer: Page;

  test('the viewer signs in: no token creation offered, and the server refuses one (403)', async () => {
    viewer = await newPage();
    await signIn(viewer, MEMBER_EMAIL, MEMBER_PASSWORD);
    await viewer.getByText('Your role lets you see tokens, not create them.').waitFor();
    await expect(
      viewer.getByRole('button', { name: /^(New token|Create token)$/ }).count(),
    ).resolves.toBe(0);
    expect(await navLinks(viewer)).toEqual([
      'Tokens',
      'Webhooks',
      'OAuth apps',
      'Members',
      'Exports',
      'Imports',
      'Sandboxes',
      'Organization',
      'Account',
    ]);
    await expectAccessible(viewer, 'tokens (viewer)');
    const attempt = await api(await portalToken(viewer), '/v1/personal_access_tokens', {
      method: 'POST',
      body: JSON.stringify({ name: 'sneaky', scopes: ['students:read'] }),
    });
    expect(attempt.status).toBe(403);
    // The audit log is the server's to refuse too, not only hidden.
    expect((await api(await portalToken(viewer), '/v1/audit_events')).status).toBe(403);
    // The organization page shows the name without a rename form.
    await goTo(viewer, 'Organization', 'Organization');
    await viewer.locator('main').getByText('Self-service School', { exact: true }).waitFor();
    await expect(viewer.getByRole('button', { name: 'Save name' }).count()).resolves.toBe(0);
  });

  test('the audit log lists the invitation, acceptance, new member, role change and token, filters and pages', async () => {
    await goTo(admin, 'Audit log', 'Audit log');
    await admin.locator('tbody tr').first().waitFor();
    const actions = await admin.locator('tbody th[scope="row"]').allTextContents();
    for (const action of [
      'invitation.created',
      'invitation.accepted',
      'member.added',
      'member.role_changed',
      'token.created',
    ])
      expect(actions).toContain(action);
    await expectAccessible(admin, 'audit log');
    await screenshot(admin, 'audit-log');

    await admin.getByLabel('Action').selectOption('member.role_changed');
    await admin.waitForFunction(() =>
      [...document.querySelectorAll('tbody th[scope="row"]')].every(
        (th) => th.textContent === 'member.role_changed',
      ),
    );
    const row = admin.locator('tbody tr').first();
    // The change as before → after; the actor as a person and the app they used, not raw ids.
    await expect(visibleText(row.locator('.changes li'))).resolves.toBe('role developer → viewer');
    const actor = row.locator('.audit-actor');
    await actor.locator('.audit-person', { hasText: ADMIN_EMAIL }).waitFor();
    await expect(actor.locator('.audit-via').textContent()).resolves.toBe(
      'with app Developer portal',
    );
    await expect(actor.textContent()).resolves.not.toContain('oac_');
    // The whole ids are in the row's details.
    await row.getByText('Details').click();
    await expect(row.locator('.audit-detail dl').innerText()).resolves.toContain(
      'oac_0000000000000000000000P0RT',
    );
    await expect(row.textContent()).resolves.toContain('OAuth access token');

    // Enough renames for a second page (25 entries a page).
    const token = await portalToken(admin);
    for (let i = 0; i < 26; i++) {
      const renamed = await api(token, '/v1/organization', {
        method: 'PATCH',
        body: JSON.stringify({ name: `Self-service School ${i}` }),
      });
      expect(renamed.status).toBe(200);
    }
    await admin.getByLabel('Action').selectOption('organization.updated');
    await admin.getByText('Showing 1–25 of 26 entries').waitFor();
    await expect(admin.locator('tbody tr').count()).resolves.toBe(25);
    await admin.getByRole('button', { name: 'Next page' }).click();
    await admin.getByText('Showing 26–26 of 26 entries').waitFor();
    await expect(admin.locator('tbody tr').count()).resolves.toBe(1);
    // The oldest rename is the last entry.
    await expect(visibleText(admin.locator('tbody tr .changes li').first())).resolves.toBe(
      'name Self-service School → Self-service School 0',
    );
  });

  test('the organization page shows the rate limit and its current window; an admin renames it', async () => {
    await goTo(admin, 'Organization', 'Organization');
    await admin.getByTestId('limit').waitFor();
    await expect(admin.getByTestId('limit').textContent()).resolves.toBe(String(RATE_LIMIT));
    const used = Number(await admin.getByTestId('used').textContent());
    const remaining = Number(await admin.getByTestId('remaining').textContent());
    expect(used).toBeGreaterThan(0);
    expect(used + remaining).toBe(RATE_LIMIT);
    await admin.getByText(/changed by the platform’s operators/).waitFor();
    await admin.getByLabel('Organization name').fill('Self-service Academy');
    await admin.getByRole('button', { name: 'Save name' }).click();
    await admin.getByText('Name saved.').waitFor();
    const stored = await api(await portalToken(admin), '/v1/organization').then(
      (r) => r.json() as Promise<{ name: string }>,
    );
    expect(stored.name).toBe('Self-service Academy');
    await expectAccessible(admin, 'organization');
    await screenshot(admin, 'organization');
  });

  test('the account page shows the member and changes the password; sign-in then needs the new one', async () => {
    await goTo(viewer, 'Account', 'Your account');
    await expect(viewer.locator('dl.facts').textContent()).resolves.toBe(
      `Email${MEMBER_EMAIL}NameDana DeveloperRoleviewer`,
    );
    await expectAccessible(viewer, 'account');
    // A wrong current password: one clear sentence.
    await viewer.getByLabel('Current password').fill('not the password at all');
    await viewer.getByLabel('New password', { exact: true }).fill(MEMBER_NEW_PASSWORD);
    await viewer.getByLabel('New password again').fill(MEMBER_NEW_PASSWORD);
    await viewer.getByRole('button', { name: 'Change password' }).click();
    await expect(viewer.getByRole('alert').textContent()).resolves.toBe(
      'Your current password is not right. Type it again.',
    );
    // Typing the fix clears the error about the old value, before the form is sent again.
    await viewer.getByLabel('Current password').fill(MEMBER_PASSWORD);
    await expect(viewer.getByRole('alert').count()).resolves.toBe(0);
    await expectAccessibleEverywhere(viewer, 'account, password error fixed');
    // So does fixing a mismatch.
    await viewer.getByLabel('New password again').fill(`${MEMBER_NEW_PASSWORD}!`);
    await viewer.getByRole('button', { name: 'Change password' }).click();
    await viewer.getByText('The two new passwords are not the same.').waitFor();
    await viewer.getByLabel('New password again').fill(MEMBER_NEW_PASSWORD);
    await expect(viewer.getByRole('alert').count()).resolves.toBe(0);
    await viewer.getByRole('button', { name: 'Change password' }).click();
    await viewer.getByText('Password changed.', { exact: false }).waitFor();
    // Every other browser was signed out: the list, read again, has this one only.
    const sessions = viewer.locator('section[aria-labelledby="sessions"]');
    await sessions.getByRole('row', { name: /This browser/ }).waitFor();
    await expect(sessions.getByRole('row', { name: /Chrome on Linux/ }).count()).resolves.toBe(1);
    await screenshot(viewer, 'account');

    const fresh = await newPage();
    await fresh.goto(portal('/account'));
    await fresh.getByRole('button', { name: 'Sign in' }).click();
    await fresh.waitForURL(/\/oauth\/interaction\//);
    await fresh.getByLabel('Email').fill(MEMBER_EMAIL);
    await fresh.getByLabel('Password').fill(MEMBER_PASSWORD);
    await fresh.getByRole('button', { name: 'Sign in' }).click();
    await fresh.getByText('The email or password is not right.').waitFor();
    await fresh.getByLabel('Password').fill(MEMBER_NEW_PASSWORD);
    await fresh.getByRole('button', { name: 'Sign in' }).click();
    await fresh.waitForURL(portal('/account'));
    await fresh.getByRole('heading', { level: 1, name: 'Your account' }).waitFor();
  });

  test('an admin revokes an invitation (its link then says so) and removes a member (their session then 401)', async () => {
    await goTo(admin, 'Members', 'Members');
    await admin.getByLabel('Email').fill('late@self-service-school.test');
    await admin.getByRole('button', { name: 'Create invitation' }).click();
    const link = admin.getByLabel('Invitation link', { exact: true });
    await link.waitFor();
    const lateUrl = await link.inputValue();
    await admin
      .getByRole('button', { name: 'Revoke invitation for late@self-service-school.test' })
      .click();
    await admin
      .getByRole('dialog', { name: 'Revoke this invitation?' })
      .getByRole('button', { name: 'Revoke invitation' })
      .click();
    await admin.getByText('Invitation for late@self-service-school.test revoked.').waitFor();
    await admin.getByText('No pending invitations.').waitFor();
    // The one-time link went with it.
    await expect(link.count()).resolves.toBe(0);
    expect((await fetch(lateUrl)).status).toBe(410);

    const viewerToken = await portalToken(viewer);
    expect((await api(viewerToken, '/v1/user')).status).toBe(200);
    await admin.getByRole('button', { name: `Remove member ${MEMBER_EMAIL}` }).click();
    // The confirmation lists what stops: their token and their signed-in browser.
    const dialog = admin.getByRole('dialog', { name: 'Remove this member?' });
    const said = await dialog.textContent();
    expect(said).toContain('This stops, at once: 1 personal access token (');
    expect(said).toMatch(/signed-in browser/);
    await expectAccessible(admin, 'remove member dialog');
    await dialog.getByLabel(/to confirm/).fill(MEMBER_EMAIL);
    await dialog.getByRole('button', { name: 'Remove member' }).click();
    await admin.getByText(`${MEMBER_EMAIL} removed.`).waitFor();
    await expect(admin.getByRole('row', { name: new RegExp(MEMBER_EMAIL) }).count()).resolves.toBe(
      0,
    );
    expect((await api(viewerToken, '/v1/user')).status).toBe(401);
  });

  test('narrow screens: the new pages fit a 360-pixel viewport', async () => {
    await admin.setViewportSize({ width: 360, height: 800 });
    for (const route of ['/members', '/audit-log', '/organization', '/account']) {
      await admin.goto(portal(route));
      await admin.getByRole('heading', { level: 1 }).waitFor();
      await admin.waitForLoadState('networkidle');
      const tooWide = await admin.evaluate(() => {
        const width = document.documentElement.clientWidth;
        return [...document.querySelectorAll('body *')]
          .filter((el) => el.getBoundingClientRect().right > width)
          .filter((el) => !el.closest('.table-wrap'))
          .map((el) => `${el.tagName.toLowerCase()}.${el.className}`)
          .slice(0, 5);
      });
      const overflow = await admin.evaluate(
        () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
      );
      expect({ route, overflow, tooWide }).toEqual({ route, overflow: 0, tooWide: [] });
    }
  });
});
