/**
 * The audit log's filters and CSV in Chromium against the real server (SQLite; PostgreSQL with
 * TEST_DATABASE_URL): by kind of actor, member and dates, kept in the URL; actors as people and
 * the token or app they used; the CSV of the whole selection with formula-like cells
 * neutralised; at 1280 and 375 pixels, light and dark, with no axe-core violation.
 */
import { readFile } from 'node:fs/promises';
import { startTestServer, type TestServer } from '@platform/server/testing';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { allViolations, launchChromium, loopbackContext, expectPortalBuilt } from './browser';
import { apiCaller } from './product-checks';

const ADMIN_EMAIL = 'head@audit-school.test';
const DEVELOPER_EMAIL = 'dev@audit-school.test';
const PASSWORD = 'correct horse battery staple';

let server: TestServer;
let browser: Browser;
let context: BrowserContext;
let page: Page;
const refused: string[] = [];

const portal = (pathname = '') => `${server.url}/portal${pathname}`;

const api = (token: string, pathname: string, init: RequestInit = {}) =>
  apiCaller(server)(token, pathname, init);

async function expectAccessible(name: string): Promise<void> {
  expect({ page: name, violations: await allViolations(page) }).toEqual({
    page: name,
    violations: [],
  });
}

/** `YYYY-MM-DD` of the browser's day, `offset` days on. */
function browserDay(offset = 0): Promise<string> {
  return page.evaluate((days) => {
    const d = new Date(Date.now() + days * 86_400_000);
    const pad = (n: number) => String(n).padStart(2, '0');
    return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
  }, offset);
}

beforeAll(async () => {
  expectPortalBuilt();
  server = await startTestServer({
    postgresAdminUrl: process.env.TEST_DATABASE_URL || undefined,
    env: { WEBHOOK_DISPATCHER: 'false' },
  });
  const organization = await server.createOrganization({ name: 'Audit School' });
  await server.createUser(organization.id, ADMIN_EMAIL, PASSWORD, { role: 'admin' });
  await server.createUser(organization.id, DEVELOPER_EMAIL, PASSWORD, { role: 'developer' });
  browser = await launchChromium();
  context = await loopbackContext(browser, refused);
  page = await context.newPage();
  await page.goto(portal('/audit-log'));
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(/\/oauth\/interaction\//);
  await page.getByLabel('Email').fill(ADMIN_EMAIL);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { level: 1, name: 'Audit log' }).waitFor();

  // 26 renames with the portal's token, then one with a token whose name a spreadsheet would run.
  const raw = await page.evaluate(() => sessionStorage.getItem('platform.portal.session'));
  const token = (JSON.parse(raw!) as { accessToken: string }).accessToken;
  for (let i = 0; i < 26; i++) {
    const renamed = await api(token, '/v1/organization', {
      method: 'PATCH',
      body: JSON.stringify({ name: `Audit School ${i}` }),
    });
    expect(renamed.status).toBe(200);
  }
  const made = await api(token, '/v1/personal_access_tokens', {
    method: 'POST',
    body: JSON.stringify({ name: '=SUM(1+2) sync', scopes: ['organization:write'] }),
  }).then((r) => r.json() as Promise<{ token: string }>);
  const renamed = await api(made.token, '/v1/organization', {
    method: 'PATCH',
    body: JSON.stringify({ name: '@Audit School' }),
  });
  expect(renamed.status).toBe(200);
}, 120_000);

afterAll(async () => {
  await context?.close();
  await browser?.close();
  await server?.close();
});

afterEach(() => expect(refused).toEqual([]));

test('filters by kind of actor, member and dates, all kept in the URL', async () => {
  await page.goto(portal('/audit-log?action=organization.updated'));
  await page.getByText('Showing 1–25 of 27 entries').waitFor();
  const first = page.locator('tbody tr').first();
  await first.locator('.audit-person', { hasText: ADMIN_EMAIL }).waitFor();
  // The token's name is read once the page shows its id.
  await first.locator('.audit-via', { hasText: 'with token =SUM(1+2) sync' }).waitFor();
  await page.getByLabel('Acted through').selectOption({ label: 'Personal access token' });
  await page.getByText('1 of 1 entries').waitFor();
  await page.getByLabel('Acted through').selectOption({ label: 'Anything' });
  await page.getByLabel('Member', { exact: true }).selectOption({ label: DEVELOPER_EMAIL });
  await page.getByText('No entries match these filters.').waitFor();
  await page.getByLabel('Member', { exact: true }).selectOption({ label: ADMIN_EMAIL });
  await page.getByText('Showing 1–25 of 27 entries').waitFor();

  // Today, in the browser's time zone: every entry; from tomorrow on: none.
  const today = await browserDay();
  await page.getByLabel('From', { exact: true }).fill(today);
  await page.getByLabel('To', { exact: true }).fill(today);
  await page.getByText('Showing 1–25 of 27 entries').waitFor();
  const url = new URL(page.url());
  expect(url.searchParams.get('created_at[gte]')).toMatch(/^\d{4}-\d\d-\d\dT/);
  expect(url.searchParams.get('created_at[lt]')).toMatch(/^\d{4}-\d\d-\d\dT/);
  expect(url.searchParams.get('user_id')).toMatch(/^usr_/);
  await page.reload();
  await page.getByText('Showing 1–25 of 27 entries').waitFor();
  await expect(page.getByLabel('From', { exact: true }).inputValue()).resolves.toBe(today);
  await expect(page.getByLabel('To', { exact: true }).inputValue()).resolves.toBe(today);
  await expect(page.getByLabel('Action').inputValue()).resolves.toBe('organization.updated');
  await expectAccessible('audit log, filtered');

  await page.getByLabel('To', { exact: true }).fill('');
  await page.getByLabel('From', { exact: true }).fill(await browserDay(1));
  await page.getByText('No entries match these filters.').waitFor();
  await expectAccessible('audit log, nothing in the dates');
  await page.getByRole('button', { name: 'Any date' }).click();
  await page.getByText('Showing 1–25 of 27 entries').waitFor();
  expect(new URL(page.url()).searchParams.has('created_at[gte]')).toBe(false);
});

test('"Download CSV" writes the whole selection, formula-like cells neutralised', async () => {
  await page.goto(portal('/audit-log?action=organization.updated'));
  await page.getByText('Showing 1–25 of 27 entries').waitFor();
  const [file] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('button', { name: 'Download CSV' }).click(),
  ]);
  await page.getByText('The file holds all 27 entries these filters select.').waitFor();
  expect(file.suggestedFilename()).toMatch(/^audit-log-\d{4}-\d\d-\d\d\.csv$/);
  const lines = (await readFile(await file.path(), 'utf8')).split('\r\n').filter(Boolean);
  expect(lines).toHaveLength(28);
  expect(lines[0]).toBe(
    'created_at,action,actor,actor_type,credential,credential_id,user_id,ip,target_type,target_id,changes',
  );
  // Newest first: the rename with the formula-named token, its name written as text.
  expect(lines[1]).toContain(
    `,organization.updated,${ADMIN_EMAIL},personal_access_token,'=SUM(1+2) sync,tok_`,
  );
  expect(lines[1]).toMatch(/,name: Audit School 25 → @Audit School$/);
  expect(lines[27]).toContain(
    `${ADMIN_EMAIL},oauth_access_token,Developer portal,oac_0000000000000000000000P0RT,`,
  );
  await expectAccessible('audit log, CSV written');
});

test('a phone, dark and light: entries are cards, actors fit, ids shortened with the whole one in details', async () => {
  await page.goto(portal('/audit-log?action=organization.updated'));
  await page.setViewportSize({ width: 375, height: 800 });
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.getByText('Showing 1–25 of 27 entries').waitFor();
  const row = page.locator('tbody tr').nth(1);
  const actor = row.locator('.audit-actor');
  await actor.locator('.audit-person', { hasText: ADMIN_EMAIL }).waitFor();
  await expect(actor.textContent()).resolves.toBe(`${ADMIN_EMAIL}with app Developer portal`);
  const box = await actor.boundingBox();
  expect(box!.x + box!.width).toBeLessThanOrEqual(375);
  await expect(
    page.evaluate(() => document.documentElement.scrollWidth),
  ).resolves.toBeLessThanOrEqual(375);
  // The target's id is shortened on one line; the details have every id whole.
  await expect(row.locator('td[data-label="Target"] code').textContent()).resolves.toMatch(
    /^org_.{4}…/,
  );
  await row.getByText('Details').click();
  await expect(row.locator('.audit-detail dl').textContent()).resolves.toContain(
    'oac_0000000000000000000000P0RT',
  );
  await expectAccessible('audit log, phone, dark, details open');
  await page.emulateMedia({ colorScheme: 'light' });
  await expectAccessible('audit log, phone, light, details open');
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.setViewportSize({ width: 1280, height: 900 });
  await expectAccessible('audit log, dark, details open');
  await page.emulateMedia({ colorScheme: 'light' });
});
