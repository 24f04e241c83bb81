/**
 * The portal's sandboxes in Chromium against the real server: an admin creates a sandbox,
 * switches into it (a banner on every page; the pages read the sandbox), triggers an event there,
 * goes back to live data, and in and out again with the header's switcher; a viewer switches in
 * too and reads without a trigger; the pages have no axe-core violations.
 */
import { startTestServer, type TestServer } from '@platform/server/testing';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { allViolations, expectPortalBuilt, launchChromium, loopbackContext } from './browser';

const EMAIL = 'sandboxes@portal-school.test';
const PASSWORD = 'correct horse battery staple';
const VIEWER_EMAIL = 'viewer@portal-school.test';

let server: TestServer;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let token: string;
let organizationId: string;
const refused: string[] = [];

beforeAll(async () => {
  expectPortalBuilt();
  server = await startTestServer({
    postgresAdminUrl: process.env.TEST_DATABASE_URL || undefined,
    redisUrl: process.env.TEST_REDIS_URL || undefined,
  });
  const organization = await server.createOrganization({ name: 'Live School' });
  organizationId = organization.id;
  await server.createUser(organization.id, EMAIL, PASSWORD, { role: 'admin' });
  ({ token } = await server.createToken(organization.id, ['all']));
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

async function api<T>(path: string, as = token): Promise<T> {
  const res = await fetch(`${server.url}${path}`, { headers: { Authorization: `Bearer ${as}` } });
  return (await res.json()) as T;
}

test('create a sandbox, work in it, trigger an event, and go back to live data', async () => {
  await page.goto(`${server.url}/portal/sandboxes`);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(/\/oauth\/interaction\//);
  await page.getByLabel('Email').fill(EMAIL);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Sandboxes', level: 1 }).waitFor();
  await page.getByText('No sandboxes yet.').waitFor();

  await page.getByLabel('Name').fill('Integration dev');
  await page.getByLabel('Students').fill('12');
  await page.getByRole('button', { name: 'Create sandbox' }).click();
  await page.getByText('Integration dev is ready.').waitFor({ timeout: 20_000 });
  await expectAccessible('sandboxes, one made');
  expect(
    (await api<{ data: { name: string }[] }>('/v1/sandboxes')).data.map((s) => s.name),
  ).toEqual(['Integration dev']);

  await page.getByRole('button', { name: 'Switch to Integration dev' }).click();
  const banner = page.getByRole('region', { name: 'Sandbox' });
  await banner.getByText('Sandbox: Integration dev.').waitFor();
  // The pages now read the sandbox: its tokens are the portal's own session token only.
  await page.getByRole('link', { name: 'Tokens' }).click();
  await page.getByRole('cell', { name: 'Portal session' }).first().waitFor();
  await expectAccessible('tokens, in a sandbox');

  await banner.getByLabel('Event').selectOption('student.created');
  await banner.getByRole('button', { name: 'Trigger event' }).click();
  await banner.getByText(/^Sent student\.created \(evt_/).waitFor({ timeout: 20_000 });
  const sandboxToken = await page.evaluate(
    () =>
      (JSON.parse(sessionStorage.getItem('platform.portal.sandbox')!) as { token: string }).token,
  );
  expect(sandboxToken).toMatch(/^pat_test_/);
  const students = await api<{ meta: { total: number } }>('/v1/students?per_page=1', sandboxToken);
  expect(students.meta.total).toBe(13);
  expect((await api<{ meta: { total: number } }>('/v1/students?per_page=1')).meta.total).toBe(0);

  await banner.getByRole('button', { name: 'Back to live data' }).click();
  await banner.waitFor({ state: 'detached' });
  await page.getByRole('cell', { name: 'Portal session' }).waitFor({ state: 'detached' });

  // The header's switcher goes in and out of a sandbox from any page.
  const switcher = page.getByRole('combobox', { name: 'Data' });
  await switcher.selectOption({ label: 'Sandbox: Integration dev' });
  await banner.getByText('Sandbox: Integration dev.').waitFor();
  await page.getByRole('cell', { name: 'Portal session' }).first().waitFor();
  await expectAccessible('tokens, in a sandbox, from the switcher');
  await switcher.selectOption({ label: 'Live' });
  await banner.waitFor({ state: 'detached' });
}, 60_000);

test('a viewer switches into a sandbox too, and reads it without a trigger', async () => {
  const made = await fetch(`${server.url}/v1/sandboxes`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ name: 'Viewer practice', students: 3 }),
  });
  expect(made.status).toBe(201);
  await server.createUser(organizationId, VIEWER_EMAIL, PASSWORD, { role: 'viewer' });
  const viewerContext = await loopbackContext(browser, refused);
  const viewer = await viewerContext.newPage();
  try {
    await viewer.goto(`${server.url}/portal/sandboxes`);
    await viewer.getByRole('button', { name: 'Sign in' }).click();
    await viewer.waitForURL(/\/oauth\/interaction\//);
    await viewer.getByLabel('Email').fill(VIEWER_EMAIL);
    await viewer.getByLabel('Password').fill(PASSWORD);
    await viewer.getByRole('button', { name: 'Sign in' }).click();
    await viewer.getByRole('button', { name: 'Switch to Viewer practice' }).click();
    const banner = viewer.getByRole('region', { name: 'Sandbox' });
    await banner.getByText('Your role reads only').waitFor();
    expect(await banner.getByRole('button', { name: 'Trigger event' }).count()).toBe(0);
    await expectAccessible('sandbox banner, viewer', viewer);
    const sandboxToken = await viewer.evaluate(
      () =>
        (JSON.parse(sessionStorage.getItem('platform.portal.sandbox')!) as { token: string }).token,
    );
    const students = await api<{ meta: { total: number } }>(
      '/v1/students?per_page=1',
      sandboxToken,
    );
    expect(students.meta.total).toBe(3);
    // The sandbox's token ends with the portal session it was made for, not never.
    const session = await viewer.evaluate(
      () => JSON.parse(sessionStorage.getItem('platform.portal.session')!) as { expiresAt: number },
    );
    const made = await api<{ expires_at: string | null }>('/v1/token', sandboxToken);
    expect(made.expires_at).not.toBeNull();
    expect(Date.parse(made.expires_at!)).toBeLessThanOrEqual(session.expiresAt);
    expect(Date.parse(made.expires_at!)).toBeGreaterThan(Date.now());
  } finally {
    await viewerContext.close();
  }
}, 60_000);

async function expectAccessible(name: string, on: Page = page): Promise<void> {
  expect({ page: name, violations: await allViolations(on) }).toEqual({
    page: name,
    violations: [],
  });
}
