/**
 * The "Request logs" and "Usage" pages, in Chromium at 1280 and 375 pixels wide, against the
 * real server (SQLite; PostgreSQL with TEST_DATABASE_URL): an admin and a developer page through
 * their organization's API requests with the filters and the page in the URL ("N of M") and see
 * the hourly charts with their text and table equivalents; a viewer is told neither page is open
 * to their role; axe-core finds no violation in any state.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { startTestServer, type TestServer } from '@platform/server/testing';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { allViolations, launchChromium, loopbackContext, REPO_ROOT, screenshot } from './browser';

const PASSWORD = 'correct horse battery staple';

let server: TestServer;
let browser: Browser;
const refused: string[] = [];

beforeAll(async () => {
  const dist = path.join(REPO_ROOT, 'apps', 'portal', 'dist', 'index.html');
  if (!existsSync(dist))
    throw new Error(`${dist} is missing: build the portal first (pnpm build, or turbo run test)`);
  server = await startTestServer({
    postgresAdminUrl: process.env.TEST_DATABASE_URL || undefined,
    redisUrl: process.env.TEST_REDIS_URL || undefined,
  });
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

afterEach(() => {
  expect(refused).toEqual([]);
});

function portal(pathname = ''): string {
  return `${server.url}/portal${pathname}`;
}

async function expectAccessible(page: Page, name: string): Promise<void> {
  expect({ page: name, violations: await allViolations(page) }).toEqual({
    page: name,
    violations: [],
  });
}

async function expectNoSidewaysScroll(page: Page, what: string): Promise<void> {
  const overflow = await page.evaluate(
    () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
  );
  expect({ what, overflow }).toEqual({ what, overflow: 0 });
}

describe.each([
  { width: 1280, height: 900 },
  { width: 375, height: 800 },
])('request logs at $width px', (viewport) => {
  const tag = `w${viewport.width}`;
  const contexts: BrowserContext[] = [];
  let organizationId = '';
  let sync: { token: string; id: string };
  const adminEmail = `admin-${tag}@logs-school.test`;
  const developerEmail = `dev-${tag}@logs-school.test`;
  const viewerEmail = `viewer-${tag}@logs-school.test`;

  async function signIn(email: string, pathname: string): Promise<Page> {
    const context = await loopbackContext(browser, refused, viewport);
    contexts.push(context);
    const page = await context.newPage();
    await page.goto(portal(pathname));
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/oauth\/interaction\//);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(portal(pathname));
    await page.getByRole('heading', { level: 1 }).waitFor();
    return page;
  }

  beforeAll(async () => {
    const organization = await server.createOrganization({ name: `Logs School ${tag}` });
    organizationId = organization.id;
    await server.createUser(organizationId, adminEmail, PASSWORD, { role: 'admin' });
    await server.createUser(organizationId, developerEmail, PASSWORD, { role: 'developer' });
    await server.createUser(organizationId, viewerEmail, PASSWORD, { role: 'viewer' });
    // An integration's token: 26 list calls that succeed and one read of a missing student.
    sync = await server.createToken(organizationId, ['students:read'], { name: 'sync' });
    const call = (pathname: string) =>
      fetch(`${server.url}${pathname}?q=private-value`, {
        headers: { Authorization: `Bearer ${sync.token}` },
      }).then((res) => res.text());
    for (let i = 0; i < 26; i++) await call('/v1/students');
    await call('/v1/students/stu_01JD6Y3ZK8R5V2N3M4P5Q6R7S8');
  }, 120_000);

  afterAll(async () => {
    for (const context of contexts) await context.close();
  });

  test('an admin pages through a token\'s requests with "N of M", filters in the URL, and no query values shown', async () => {
    const admin = await signIn(adminEmail, '/request-logs');
    await admin.goto(portal(`/request-logs?credential_id=${sync.id}&page=2`));
    await admin.getByText('Showing 26–27 of 27 requests').waitFor();
    await expect(admin.getByLabel('Token or app id').inputValue()).resolves.toBe(sync.id);
    // Newest first: page 2 holds the two oldest list calls.
    await expect(admin.locator('tbody tr').count()).resolves.toBe(2);
    await expect(admin.locator('tbody tr').first().textContent()).resolves.toContain(
      'GET /v1/students',
    );
    await expect(admin.locator('main').textContent()).resolves.not.toContain('private-value');
    await expectAccessible(admin, 'request logs, page 2');
    await expectNoSidewaysScroll(admin, 'request logs, page 2');

    await admin.getByLabel('Status').selectOption('4xx');
    await admin.getByText('1 of 1 requests').waitFor();
    const search = new URL(admin.url()).searchParams;
    expect(Object.fromEntries(search)).toEqual({ credential_id: sync.id, status_class: '4xx' });
    const row = admin.locator('tbody tr').first();
    await expect(row.textContent()).resolves.toContain('/v1/students/:id');
    await expect(row.textContent()).resolves.toContain('404');
    await expect(row.textContent()).resolves.toContain('not_found');
    await expect(row.textContent()).resolves.not.toContain('stu_01JD6Y3ZK8R5V2N3M4P5Q6R7S8');
    await expectAccessible(admin, 'request logs, 4xx');

    await admin.getByLabel('Route').fill('/v1/courses');
    await admin.getByRole('button', { name: 'Apply' }).click();
    await admin.getByText('No requests match these filters.').waitFor();
    expect(new URL(admin.url()).searchParams.get('route')).toBe('/v1/courses');
    await expectAccessible(admin, 'request logs, nothing matches');
    if (viewport.width === 375) await screenshot(admin, 'request-logs-phone');
    else await screenshot(admin, 'request-logs');

    // The portal's own calls are shown apart: only when asked for.
    const portalClient = 'oac_0000000000000000000000P0RT';
    await admin.goto(portal('/request-logs?source=portal'));
    await expect(admin.getByLabel('Requests').inputValue()).resolves.toBe('portal');
    await admin.locator('tbody tr').first().waitFor();
    await expect(admin.locator('tbody').textContent()).resolves.toContain(portalClient);
    await expect(admin.locator('tbody').textContent()).resolves.not.toContain(sync.id);
    await admin.goto(portal('/request-logs'));
    await admin.locator('tbody tr').first().waitFor();
    await expect(admin.locator('tbody').textContent()).resolves.not.toContain(portalClient);
  });

  test('a developer reads it too; a viewer has no link to it and is told it is not open to their role', async () => {
    const developer = await signIn(developerEmail, '/request-logs');
    await developer.goto(portal(`/request-logs?credential_id=${sync.id}`));
    await developer.getByText('Showing 1–25 of 27 requests').waitFor();
    await expectAccessible(developer, 'request logs (developer)');

    const viewer = await signIn(viewerEmail, '/tokens');
    await expect(viewer.getByRole('link', { name: 'Request logs' }).count()).resolves.toBe(0);
    await viewer.goto(portal('/request-logs'));
    await viewer.getByRole('heading', { level: 1, name: 'No access' }).waitFor();
    await viewer
      .getByText('The Request logs page is not open to your role (viewer).', { exact: false })
      .waitFor();
    await expectAccessible(viewer, 'request logs (viewer): no access');
  });

  test('usage: hourly request and delivery charts, each with a summary and a table of the busy hours', async () => {
    const admin = await signIn(adminEmail, '/usage');
    await admin.getByRole('heading', { level: 2, name: 'API requests' }).waitFor();
    const chart = admin.getByRole('img', {
      name: /^API requests, last 7 days by hour: \d+ success/,
    });
    await chart.waitFor();
    const name = (await admin.locator('#usage-requests-summary').textContent()) ?? '';
    // The integration's 26 list calls at least (the portal's own calls count too), and its 404.
    expect(Number(/(\d+) success/.exec(name)?.[1])).toBeGreaterThanOrEqual(26);
    expect(name).toContain('1 client error (4xx)');
    expect(name).toContain('0 server error (5xx)');
    // The canvas is drawn at the page's width, not past it.
    const box = await admin.locator('#usage-requests-heading ~ .chart-box canvas').boundingBox();
    expect(box!.width).toBeGreaterThan(100);
    expect(box!.width).toBeLessThanOrEqual(viewport.width);
    await admin.getByText('API requests as a table').click();
    const row = admin.locator('#usage-requests-heading ~ details tbody tr').first();
    await expect(row.locator('td').nth(1).textContent()).resolves.toBe('1');
    await admin
      .getByRole('img', { name: /^Webhook deliveries, last 7 days by hour: 0 succeeded, 0 failed/ })
      .waitFor();
    await admin.getByText('Webhook deliveries as a table').click();
    await admin.getByText('No deliveries in the last 7 days.').waitFor();
    await expectAccessible(admin, 'usage, tables open');
    await expectNoSidewaysScroll(admin, 'usage');
    if (viewport.width === 375) await screenshot(admin, 'usage-phone');
    else await screenshot(admin, 'usage');

    const viewer = await signIn(viewerEmail, '/tokens');
    await expect(viewer.getByRole('link', { name: 'Usage' }).count()).resolves.toBe(0);
    await viewer.goto(portal('/usage'));
    await viewer.getByRole('heading', { level: 1, name: 'No access' }).waitFor();
    await expectAccessible(viewer, 'usage (viewer): no access');
  });
});
