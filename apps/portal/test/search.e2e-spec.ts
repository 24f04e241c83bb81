/**
 * Search and filters on the lists of tokens (and their status), members, OAuth apps, webhook
 * endpoints and invitations, in Chromium at 1280 and 375 pixels wide against the real server (SQLite;
 * PostgreSQL with TEST_DATABASE_URL): a labelled search box whose text reaches the API as `q`
 * once typing pauses, kept in the URL (`?q=`, back to page 1), a "No tokens match “x”" empty
 * state, and axe-core with no violation of any impact in each search state.
 */
import { startTestServer, type TestServer } from '@platform/server/testing';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import {
  allViolations,
  launchChromium,
  loopbackContext,
  screenshot,
  expectPortalBuilt,
} from './browser';

const PASSWORD = 'correct horse battery staple';

let server: TestServer;
let browser: Browser;
const refused: string[] = [];

beforeAll(async () => {
  expectPortalBuilt();
  server = await startTestServer({
    postgresAdminUrl: process.env.TEST_DATABASE_URL || undefined,
    env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_DISPATCHER: 'false' },
  });
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

afterEach(() => expect(refused).toEqual([]));

const portal = (pathname = '') => `${server.url}/portal${pathname}`;

async function expectAccessible(page: Page, name: string): Promise<void> {
  expect({ page: name, violations: await allViolations(page) }).toEqual({
    page: name,
    violations: [],
  });
}

/** The query of the page's URL, decoded. */
const queryOf = (page: Page) => Object.fromEntries(new URL(page.url()).searchParams);

describe.each([
  { width: 1280, height: 900 },
  { width: 375, height: 800 },
])('search at $width px', (viewport) => {
  const tag = `w${viewport.width}`;
  const contexts: BrowserContext[] = [];
  let admin: Page;
  const adminEmail = `admin-${tag}@search-school.test`;

  beforeAll(async () => {
    const { id } = await server.createOrganization({ name: `Search School ${tag}` });
    await server.createUser(id, adminEmail, PASSWORD, { role: 'admin' });
    await server.createUser(id, `ana_maria-${tag}@search-school.test`, PASSWORD, {
      role: 'developer',
    });
    // 30 tokens: a search must bring a match from page 2 back to page 1. `sync 1` has expired
    // and `sync 2` is revoked, for the status filter.
    await server.createToken(id, ['students:read'], { name: 'Deploy 100% prod' });
    for (let i = 1; i < 30; i++) {
      const made = await server.createToken(id, ['students:read'], {
        name: `sync ${i}`,
        ...(i === 1 && { expiresAt: new Date(Date.now() + 3_600_000) }),
      });
      // An expiry in the past, which the API refuses to set: written to the row.
      if (i === 1)
        await server.dataSource
          .getRepository('PersonalAccessToken')
          .update(made.id, { expiresAt: new Date(Date.now() - 86_400_000) });
      if (i === 2) await server.revokeToken(made.id);
    }
    await server.createOAuthClient(id, {
      type: 'public',
      name: 'Gradebook Mobile',
      redirect_uris: ['https://app.example/cb'],
    });
    await server.createOAuthClient(id, {
      type: 'confidential',
      name: 'Timetable',
      redirect_uris: ['https://app.example/cb'],
    });
    // Another organization's token of the same name, which no search of ours may show.
    const other = await server.createOrganization({ name: `Other ${tag}` });
    await server.createToken(other.id, ['students:read'], { name: 'Deploy 100% prod elsewhere' });

    const context = await loopbackContext(browser, refused, viewport);
    contexts.push(context);
    admin = await context.newPage();
    await admin.goto(portal('/tokens'));
    await admin.getByRole('button', { name: 'Sign in' }).click();
    await admin.waitForURL(/\/oauth\/interaction\//);
    await admin.getByLabel('Email').fill(adminEmail);
    await admin.getByLabel('Password').fill(PASSWORD);
    await admin.getByRole('button', { name: 'Sign in' }).click();
    await admin.waitForURL(portal('/tokens'));
    await admin.getByRole('heading', { level: 1 }).waitFor();
  }, 120_000);

  afterAll(async () => {
    for (const context of contexts) await context.close();
  });

  test('tokens: typing searches (in the URL, back to page 1), a miss says so, Back restores', async () => {
    await admin.goto(portal('/tokens?page=2'));
    await admin.getByText('Showing 26–30 of 30 tokens').waitFor();
    // The oldest token, on page 2; its `%` is taken literally.
    await admin.getByRole('searchbox', { name: 'Search tokens' }).fill('100%');
    await admin.getByText('1 of 1 tokens').waitFor();
    expect(queryOf(admin)).toEqual({ q: '100%' });
    await expect(admin.locator('tbody tr').count()).resolves.toBe(1);
    await admin.getByRole('row', { name: /Deploy 100% prod/ }).waitFor();
    await expect(admin.getByText('elsewhere').count()).resolves.toBe(0);
    await expectAccessible(admin, 'tokens, searched');
    if (viewport.width === 1280) await screenshot(admin, 'tokens-search');

    await admin.getByRole('searchbox', { name: 'Search tokens' }).fill('no such token');
    await admin.getByText('No tokens match “no such token”.').waitFor();
    expect(queryOf(admin)).toEqual({ q: 'no such token' });
    await expectAccessible(admin, 'tokens, no match');

    // A reload keeps the search; Back goes to the previous one, box included.
    await admin.reload();
    await admin.getByText('No tokens match “no such token”.').waitFor();
    await admin.goBack();
    await admin.getByText('1 of 1 tokens').waitFor();
    await expect(
      admin.getByRole('searchbox', { name: 'Search tokens' }).inputValue(),
    ).resolves.toBe('100%');
    // Clearing the box shows every token again, from page 1.
    await admin.getByRole('searchbox', { name: 'Search tokens' }).fill('');
    await admin.getByText('Showing 1–25 of 30 tokens').waitFor();
    expect(queryOf(admin)).toEqual({});
  });

  test('tokens: Show picks active, expired or revoked ones (in the URL), with the search', async () => {
    await admin.goto(portal('/tokens'));
    await admin.getByText('Showing 1–25 of 30 tokens').waitFor();
    const show = admin.getByLabel('Show', { exact: true });
    await show.selectOption({ label: 'Expired' });
    await admin.getByText('1 of 1 tokens').waitFor();
    expect(queryOf(admin)).toEqual({ status: 'expired' });
    await admin.getByRole('rowheader', { name: /^sync 1 Expired$/ }).waitFor();
    await expectAccessible(admin, 'tokens, expired');

    await show.selectOption({ label: 'Revoked' });
    await admin.getByRole('rowheader', { name: /^sync 2 Revoked/ }).waitFor();
    expect(queryOf(admin)).toEqual({ status: 'revoked' });
    await expect(admin.locator('tbody tr').count()).resolves.toBe(1);
    // A revoked token offers nothing to revoke.
    await expect(admin.getByRole('button', { name: /^Revoke/ }).count()).resolves.toBe(0);

    await show.selectOption({ label: 'Active' });
    await admin.getByText('Showing 1–25 of 28 tokens').waitFor();
    expect(queryOf(admin)).toEqual({ status: 'active' });
    // With a search: only active matches; a reload keeps both.
    await admin.getByRole('searchbox', { name: 'Search tokens' }).fill('sync 1');
    await admin.getByText('10 of 10 tokens').waitFor();
    expect(queryOf(admin)).toEqual({ status: 'active', q: 'sync 1' });
    await expect(admin.getByRole('rowheader', { name: /^sync 1$/ }).count()).resolves.toBe(0);
    await admin.reload();
    await admin.getByText('10 of 10 tokens').waitFor();
    await expect(show.inputValue()).resolves.toBe('active');
    await expectAccessible(admin, 'tokens, active and searched');

    await admin.getByRole('searchbox', { name: 'Search tokens' }).fill('Deploy');
    await admin.waitForURL(/q=Deploy/);
    await show.selectOption({ label: 'Revoked' });
    await admin.getByText('No tokens match “Deploy”.').waitFor();
    expect(queryOf(admin)).toEqual({ status: 'revoked', q: 'Deploy' });
    await expectAccessible(admin, 'tokens, revoked, no match');
    // All tokens drops the filter from the URL.
    await admin.getByRole('searchbox', { name: 'Search tokens' }).fill('');
    await admin.waitForURL((url) => !url.searchParams.has('q'));
    await show.selectOption({ label: 'All tokens' });
    await admin.getByText('Showing 1–25 of 30 tokens').waitFor();
    expect(queryOf(admin)).toEqual({});
  });

  test('members, invitations, OAuth apps and webhook endpoints: search and filters', async () => {
    await admin.goto(portal('/members'));
    // The whole list first, so what goes below is the search's doing.
    await admin.getByRole('rowheader', { name: adminEmail }).waitFor();
    await admin.getByRole('searchbox', { name: 'Search members' }).fill('ana_m');
    // The admin's row goes once the search lands; the match stays.
    await admin.getByRole('rowheader', { name: adminEmail }).waitFor({ state: 'detached' });
    await admin.getByRole('rowheader', { name: `ana_maria-${tag}@search-school.test` }).waitFor();
    expect(queryOf(admin)).toEqual({ q: 'ana_m' });
    await admin.getByLabel('Filter by role', { exact: true }).selectOption('viewer');
    await admin.getByText('No members match “ana_m”.').waitFor();
    expect(queryOf(admin)).toEqual({ q: 'ana_m', role: 'viewer' });
    await expectAccessible(admin, 'members, searched and filtered');

    // Invitations keep their own search in the URL, beside the members'.
    await admin.goto(portal('/members'));
    await admin.getByLabel('Email', { exact: true }).fill(`parent-${tag}@search-school.test`);
    await admin.getByRole('button', { name: 'Create invitation' }).click();
    await admin.getByRole('row', { name: new RegExp(`parent-${tag}`) }).waitFor();
    await admin.getByRole('searchbox', { name: 'Search invitations' }).fill('teacher');
    await admin.getByText('No invitations match “teacher”.').waitFor();
    expect(queryOf(admin)).toEqual({ invitations_q: 'teacher' });
    await admin.getByRole('searchbox', { name: 'Search invitations' }).fill('parent');
    await admin.waitForURL(/invitations_q=parent/);
    await admin.getByRole('row', { name: new RegExp(`parent-${tag}`) }).waitFor();
    await expectAccessible(admin, 'invitations, searched');

    await admin.goto(portal('/oauth-apps'));
    await admin.getByRole('heading', { name: 'Timetable' }).waitFor();
    await admin.getByRole('searchbox', { name: 'Search apps' }).fill('grade');
    await admin.getByRole('heading', { name: 'Timetable' }).waitFor({ state: 'detached' });
    await admin.getByRole('heading', { name: 'Gradebook Mobile' }).waitFor();
    await admin.getByLabel('Filter by type').selectOption('confidential');
    await admin.getByText('No apps match “grade”.').waitFor();
    expect(queryOf(admin)).toEqual({ q: 'grade', type: 'confidential' });
    await expectAccessible(admin, 'OAuth apps, searched and filtered');

    await admin.goto(portal('/webhooks'));
    await admin.getByRole('searchbox', { name: 'Search endpoints' }).fill('sis_');
    await admin.getByText('No endpoints match “sis_”.').waitFor();
    expect(queryOf(admin)).toEqual({ q: 'sis_' });
    await expectAccessible(admin, 'webhook endpoints, no match');
  });
});
