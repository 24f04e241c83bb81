/**
 * One person in two organizations (decision 34) in Chromium against the real server: the
 * person chooses an organization after the password, the portal shows that organization's
 * data only, and "Switch organization" goes to the other without the password again.
 */
import { startTestServer, type TestServer } from '@platform/server/testing';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { allViolations, expectPortalBuilt, launchChromium, loopbackContext } from './browser';

const EMAIL = 'consultant@two-schools.test';
const PASSWORD = 'correct horse battery staple';

let server: TestServer;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let ids: { north: string; south: string };
const refused: string[] = [];

beforeAll(async () => {
  expectPortalBuilt();
  server = await startTestServer({
    postgresAdminUrl: process.env.TEST_DATABASE_URL || undefined,
    redisUrl: process.env.TEST_REDIS_URL || undefined,
  });
  const north = await server.createOrganization({ name: 'North School' });
  const south = await server.createOrganization({ name: 'South School' });
  await server.createUser(north.id, EMAIL, PASSWORD, { role: 'admin' });
  await server.createUser(south.id, EMAIL, PASSWORD, { role: 'viewer' });
  ids = { north: north.id, south: south.id };
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

test('choose an organization at sign-in, then switch to the other without the password', async () => {
  await page.goto(`${server.url}/portal/tokens`);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(/\/oauth\/interaction\//);
  await page.getByLabel('Email').fill(EMAIL);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();

  await page.getByRole('heading', { name: /as a member of/ }).waitFor();
  expect({ page: 'choice', violations: await allViolations(page) }).toEqual({
    page: 'choice',
    violations: [],
  });
  await page.getByLabel('North School (admin)').check();
  await page.getByRole('button', { name: 'Continue' }).click();
  await page.waitForFunction(() => document.title.includes('North School'));
  await page.getByRole('heading', { name: 'Tokens', level: 1 }).waitFor();
  expect(await sessionOrganization()).toBe(ids.north);

  await page.getByRole('button', { name: 'Switch organization' }).click();
  await page.getByRole('heading', { name: /as a member of/ }).waitFor();
  expect(await page.getByLabel('Password').count()).toBe(0);
  await page.getByLabel('South School (viewer)').check();
  await page.getByRole('button', { name: 'Continue' }).click();
  await page.waitForFunction(() => document.title.includes('South School'));
  expect(await sessionOrganization()).toBe(ids.south);
  // South's role, not North's: a viewer gets no Members management there.
  await page.getByText(`${EMAIL} (viewer)`).waitFor();
}, 60_000);

/** The organization of the portal's session token, as the API says. */
async function sessionOrganization(): Promise<string> {
  const token = await page.evaluate(
    () =>
      (JSON.parse(sessionStorage.getItem('platform.portal.session')!) as { accessToken: string })
        .accessToken,
  );
  const res = await fetch(`${server.url}/v1/token`, {
    headers: { Authorization: `Bearer ${token}` },
  });
  return ((await res.json()) as { organization_id: string }).organization_id;
}
