/**
 * The Organization page's error states, in Chromium at 1280 and 375 pixels wide against the real
 * server (SQLite; PostgreSQL with TEST_DATABASE_URL): the API unreachable while loading and while
 * saving (a plain message and "Try again", which recovers), an ended session (401, "Sign in
 * again") and the organization's minute used up (429, the wait from Retry-After) say so as the
 * other pages do, never as a raw error. axe-core checks each state: no violation of any impact.
 */
import { startTestServer, type TestServer } from '@platform/server/testing';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { allViolations, launchChromium, loopbackContext, expectPortalBuilt } from './browser';
import { followNav } from './product-checks';

const PASSWORD = 'correct horse battery staple';
/** The portal's own OAuth client, whose tokens the server revokes like any other. */
const PORTAL_CLIENT_ID = 'oac_0000000000000000000000P0RT';

let server: TestServer;
let browser: Browser;
const refused: string[] = [];

beforeAll(async () => {
  expectPortalBuilt();
  server = await startTestServer({
    postgresAdminUrl: process.env.TEST_DATABASE_URL || undefined,
    env: { WEBHOOK_DISPATCHER: 'false' },
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

/** Axe in the dark theme, then in the light one (the page left dark). */
async function expectAccessibleDarkAndLight(page: Page, name: string): Promise<void> {
  await expectAccessible(page, `${name}, dark`);
  await page.emulateMedia({ colorScheme: 'light' });
  await expectAccessible(page, `${name}, light`);
  await page.emulateMedia({ colorScheme: 'dark' });
}

async function portalToken(page: Page): Promise<string> {
  const raw = await page.evaluate(() => sessionStorage.getItem('platform.portal.session'));
  return (JSON.parse(raw!) as { accessToken: string }).accessToken;
}

describe.each([
  { width: 1280, height: 900 },
  { width: 375, height: 800 },
])('the Organization page at $width px', (viewport) => {
  const tag = `w${viewport.width}`;
  const contexts: BrowserContext[] = [];
  const adminEmail = `admin-${tag}@org-school.test`;
  let organizationId = '';

  async function signIn(): Promise<Page> {
    const context = await loopbackContext(browser, refused, viewport);
    contexts.push(context);
    const page = await context.newPage();
    await page.goto(portal('/organization'));
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/oauth\/interaction\//);
    await page.getByLabel('Email').fill(adminEmail);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(portal('/organization'));
    await page.getByLabel('Organization name').waitFor();
    return page;
  }

  beforeAll(async () => {
    organizationId = (await server.createOrganization({ name: `Org School ${tag}` })).id;
    await server.createUser(organizationId, adminEmail, PASSWORD, { role: 'admin' });
  });

  afterAll(async () => {
    for (const context of contexts) await context.close();
  });

  test('API unreachable while loading: a plain message and "Try again", which recovers', async () => {
    const page = await signIn();
    await page.route('**/v1/organization', (route) => route.abort('connectionrefused'));
    await page.reload();
    await page.getByText('The API could not be reached.').waitFor({ timeout: 20_000 });
    await expect(page.getByText(/Failed to fetch|could not reach/).count()).resolves.toBe(0);
    await expect(page.getByText('Loading…').count()).resolves.toBe(0);
    await expectAccessible(page, 'organization, API unreachable');
    await page.unroute('**/v1/organization');
    await page.getByRole('button', { name: 'Try again' }).click();
    await expect(page.getByLabel('Organization name').inputValue()).resolves.toBe(
      `Org School ${tag}`,
    );
    await expect(page.getByText('The API could not be reached.').count()).resolves.toBe(0);
  });

  test('API unreachable while saving: "Try again" saves the name', async () => {
    const page = await signIn();
    await page.getByLabel('Organization name').fill(`Riverside ${tag}`);
    await page.route('**/v1/organization', (route) =>
      route.request().method() === 'PATCH' ? route.abort('connectionrefused') : route.fallback(),
    );
    await page.getByRole('button', { name: 'Save name' }).click();
    await page.getByText('The API could not be reached.').waitFor({ timeout: 20_000 });
    await expectAccessible(page, 'organization, save failed');
    await page.unroute('**/v1/organization');
    await page.getByRole('button', { name: 'Try again' }).click();
    await page.getByText('Name saved.').waitFor();
    const token = await portalToken(page);
    const stored = await fetch(`${server.url}/v1/organization`, {
      headers: { Authorization: `Bearer ${token}` },
    });
    expect(((await stored.json()) as { name: string }).name).toBe(`Riverside ${tag}`);
  });

  test('an ended session (401) says so and offers to sign in again', async () => {
    const page = await signIn();
    const token = await portalToken(page);
    await fetch(`${server.url}/oauth/revoke`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token, client_id: PORTAL_CLIENT_ID }),
    });
    await page.getByRole('button', { name: 'Refresh usage' }).click();
    await page.getByText('Your session has ended.').waitFor();
    await page.getByRole('button', { name: 'Sign in again' }).waitFor();
    await expectAccessible(page, 'organization, session ended');
  });

  test('dark and light: a rename shows in the header and tab title at once; a bare 500 gives its request id', async () => {
    const page = await signIn();
    await page.emulateMedia({ colorScheme: 'dark' });
    const before = await page.getByLabel('Organization name').inputValue();
    const orgName = page.locator('header .org-name');
    await expect(orgName.textContent()).resolves.toBe(before);
    await expect(page.title()).resolves.toBe(`Organization · ${before} · Platform`);
    await page.getByLabel('Organization name').fill(`Hillside ${tag}`);
    await page.getByRole('button', { name: 'Save name' }).click();
    await page.getByText('Name saved.').waitFor();
    // At once: no reload, no other page visited.
    await expect(orgName.textContent()).resolves.toBe(`Hillside ${tag}`);
    await expect(page.title()).resolves.toBe(`Organization · Hillside ${tag} · Platform`);
    await expectAccessibleDarkAndLight(page, 'organization, renamed');

    // A proxy's error page instead of a problem document: a sentence and the request id.
    await page.route('**/v1/organization', (route) =>
      route.request().method() === 'PATCH'
        ? route.fulfill({
            status: 500,
            contentType: 'text/html',
            headers: { 'X-Request-Id': `req_bare_${tag}` },
            body: '<html><body><h1>500 Internal Server Error</h1></body></html>',
          })
        : route.fallback(),
    );
    await page.getByLabel('Organization name').fill(`Lakeside ${tag}`);
    await page.getByRole('button', { name: 'Save name' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    await expect(alert.textContent()).resolves.toBe(
      `Something went wrong on the server (HTTP 500). Try again in a moment. If it keeps happening, quote the request id req_bare_${tag} to support.`,
    );
    await expect(orgName.textContent()).resolves.toBe(`Hillside ${tag}`);
    await expectAccessibleDarkAndLight(page, 'organization, bare 500');
    await page.unroute('**/v1/organization');

    // Each page names its own tab.
    await followNav(page, 'Members');
    await page.getByRole('heading', { level: 1, name: 'Members' }).waitFor();
    await expect(page.title()).resolves.toBe(`Members · Hillside ${tag} · Platform`);
    await followNav(page, 'Tokens');
    await page.getByRole('heading', { level: 1, name: 'Personal access tokens' }).waitFor();
    await expect(page.title()).resolves.toBe(`Tokens · Hillside ${tag} · Platform`);
  });

  test('rate limited (429): the wait from Retry-After on a disabled "Try again"', async () => {
    // Last: it spends the organization's requests for this minute.
    const page = await signIn();
    const token = await portalToken(page);
    let retryAfter: string | null = null;
    const spend = () =>
      fetch(`${server.url}/v1/token`, { headers: { Authorization: `Bearer ${token}` } });
    // Twenty at a time: spent one by one on a loaded machine, the first ones slid out of the window.
    for (let i = 0; i < 35 && retryAfter === null; i++) {
      const answers = await Promise.all(Array.from({ length: 20 }, spend));
      retryAfter = answers.find((a) => a.status === 429)?.headers.get('retry-after') ?? null;
    }
    expect(retryAfter).toMatch(/^\d+$/);
    await page.getByRole('button', { name: 'Refresh usage' }).click();
    await page.getByText('Too many requests.').waitFor();
    const text = await page.getByRole('alert').textContent();
    const said = Number(/accepts more in (\d+) seconds?/.exec(text ?? '')?.[1]);
    expect(said).toBeGreaterThan(0);
    expect(said).toBeLessThanOrEqual(Number(retryAfter));
    await expect(
      page.getByRole('button', { name: /^Try again in \d+ s$/ }).isDisabled(),
    ).resolves.toBe(true);
    await expectAccessible(page, 'organization, rate limited');
  });
});
