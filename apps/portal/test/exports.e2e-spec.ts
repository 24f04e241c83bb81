/**
 * The portal's Exports page in Chromium against the real server: a member starts an export,
 * sees it finish, and downloads its file; the page has no axe-core violations.
 */
import { readFile } from 'node:fs/promises';
import { startTestServer, type TestServer } from '@platform/server/testing';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { allViolations, launchChromium, loopbackContext, expectPortalBuilt } from './browser';

const EMAIL = 'exports@portal-school.test';
const PASSWORD = 'correct horse battery staple';

let server: TestServer;
let browser: Browser;
let context: BrowserContext;
let page: Page;
const refused: string[] = [];

beforeAll(async () => {
  expectPortalBuilt();
  server = await startTestServer({
    postgresAdminUrl: process.env.TEST_DATABASE_URL || undefined,
    redisUrl: process.env.TEST_REDIS_URL || undefined,
  });
  const organization = await server.createOrganization({ name: 'Export School' });
  await server.createUser(organization.id, EMAIL, PASSWORD);
  await server.insertStudents(organization.id, 40);
  browser = await launchChromium();
  context = await loopbackContext(browser, refused);
  page = await context.newPage();
}, 120_000);

afterAll(async () => {
  await context?.close();
  await browser?.close();
  await server?.close();
});

afterEach(() => {
  expect(refused).toEqual([]);
});

test('a member starts an export, sees it succeed, and downloads the file', async () => {
  await page.goto(`${server.url}/portal/exports`);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(/\/oauth\/interaction\//);
  await page.getByLabel('Email').fill(EMAIL);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Exports', level: 1 }).waitFor();
  await page.getByText('No exports yet.').waitFor();

  await page.getByLabel('Collection').selectOption('students');
  await page.getByLabel('Format').selectOption('ndjson');
  await page.getByRole('button', { name: 'Start export' }).click();
  const download = page.getByRole('button', { name: /^Download/ });
  await download.waitFor({ timeout: 20_000 });
  await expect(page.getByRole('cell', { name: 'succeeded' }).isVisible()).resolves.toBe(true);
  await expect(page.getByRole('cell', { name: '40', exact: true }).isVisible()).resolves.toBe(true);
  await expectAccessible('exports, one succeeded');

  const [file] = await Promise.all([page.waitForEvent('download'), download.click()]);
  expect(file.suggestedFilename()).toMatch(/^students-exp_[0-9A-Z]+\.ndjson$/);
  const text = await readFile(await file.path(), 'utf8');
  const lines = text.split('\n').filter(Boolean);
  expect(lines).toHaveLength(40);
  expect(JSON.parse(lines[0]!)).toMatchObject({ object: 'student' });
}, 60_000);

test('filters narrow an export; "Copy download link" copies a link that downloads it without a token', async () => {
  const raw = await page.evaluate(() => sessionStorage.getItem('platform.portal.session'));
  const token = (JSON.parse(raw!) as { accessToken: string }).accessToken;
  const active = (await fetch(`${server.url}/v1/students?status=active&per_page=1`, {
    headers: { Authorization: `Bearer ${token}` },
  }).then((r) => r.json())) as { meta: { total: number } };
  expect(active.meta.total).toBeGreaterThan(0);
  expect(active.meta.total).toBeLessThan(40);
  const today = await page.evaluate(() => {
    const d = new Date();
    return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
  });

  await page.getByLabel('Collection').selectOption('students');
  await page.getByLabel('Format').selectOption('csv');
  await page.getByRole('checkbox', { name: 'active', exact: true }).check();
  await page.getByLabel('Created to').fill(today);
  await expectAccessible('exports, filters');
  await page.getByRole('button', { name: 'Start export' }).click();
  // Its row names its filters; once it has succeeded, it has the active students only.
  const row = page.locator('tbody tr', {
    has: page.locator('.state-export-filter-cell', {
      hasText: /^status: active; created before: \w/,
    }),
  });
  await row.getByRole('button', { name: /^Copy download link/ }).waitFor({ timeout: 20_000 });
  await expect(
    row.getByRole('cell', { name: String(active.meta.total), exact: true }).count(),
  ).resolves.toBe(1);

  await row.getByRole('button', { name: /^Copy download link/ }).click();
  await row.getByText(/^Link copied\. It downloads the file without a token until /).waitFor();
  const link = await page.evaluate(() => navigator.clipboard.readText());
  expect(link).toMatch(new RegExp(`^${server.url}/v1/export_downloads/expdl_`));
  const file = await fetch(link);
  expect(file.status).toBe(200);
  const lines = (await file.text()).split('\r\n').filter(Boolean);
  expect(lines).toHaveLength(active.meta.total + 1);
  expect(lines.slice(1).every((line) => line.includes(',active,'))).toBe(true);
  await expectAccessible('exports, link copied');

  await page.setViewportSize({ width: 375, height: 800 });
  await page.emulateMedia({ colorScheme: 'dark' });
  await expectAccessible('exports, link copied, phone, dark');
  await page.emulateMedia({ colorScheme: 'light' });
  await expectAccessible('exports, link copied, phone');
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.setViewportSize({ width: 1280, height: 900 });
  await expectAccessible('exports, link copied, dark');
  await page.emulateMedia({ colorScheme: 'light' });
}, 60_000);

async function expectAccessible(name: string): Promise<void> {
  expect({ page: name, violations: await allViolations(page) }).toEqual({
    page: name,
    violations: [],
  });
}
