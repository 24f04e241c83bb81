/**
 * The portal's Exports page in Chromium against the real server: a member starts an export,
 * sees it finish, and downloads its file; the page has no axe-core violations.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { startTestServer, type TestServer } from '@platform/server/testing';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchChromium, loopbackContext, REPO_ROOT, seriousViolations } from './browser';

const EMAIL = 'exports@portal-school.test';
const PASSWORD = 'correct horse battery staple';

let server: TestServer;
let browser: Browser;
let context: BrowserContext;
let page: Page;
const refused: string[] = [];

beforeAll(async () => {
  const dist = path.join(REPO_ROOT, 'apps', 'portal', 'dist', 'index.html');
  if (!existsSync(dist))
    throw new Error(`${dist} is missing: build the portal first (pnpm build, or turbo run test)`);
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
  expect(await seriousViolations(page)).toEqual([]);

  const [file] = await Promise.all([page.waitForEvent('download'), download.click()]);
  expect(file.suggestedFilename()).toMatch(/^students-exp_[0-9A-Z]+\.ndjson$/);
  const text = await readFile(await file.path(), 'utf8');
  const lines = text.split('\n').filter(Boolean);
  expect(lines).toHaveLength(40);
  expect(JSON.parse(lines[0]!)).toMatchObject({ object: 'student' });
}, 60_000);
