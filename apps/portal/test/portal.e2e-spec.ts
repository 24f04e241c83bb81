/**
 * The portal in a real browser (Debian's Chromium through playwright-core) against the real
 * server (SQLite; PostgreSQL with TEST_DATABASE_URL, Redis with TEST_REDIS_URL) serving the
 * built portal (apps/portal/dist, built by turbo before the tests) on one loopback origin, and
 * the webhook inspector as the receiver. Every page is checked with axe-core.
 */
import type { AddressInfo } from 'node:net';
import { startTestServer, type TestServer } from '@platform/server/testing';
import { createInspector, type Inspector } from '@platform/webhook-inspector';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import {
  launchChromium,
  loopbackContext,
  screenshot,
  allViolations,
  expectPortalBuilt,
} from './browser';
import { expectActionsOnScreen } from './product-checks';

const EMAIL = 'admin@portal-school.test';
const PASSWORD = 'correct horse battery staple';

let server: TestServer;
let inspector: Inspector;
let inspectorUrl: string;
const inspectorSecrets: string[] = [];
let browser: Browser;
let context: BrowserContext;
let page: Page;
const refused: string[] = [];
let organizationId: string;

beforeAll(async () => {
  expectPortalBuilt();
  server = await startTestServer({
    postgresAdminUrl: process.env.TEST_DATABASE_URL || undefined,
    redisUrl: process.env.TEST_REDIS_URL || undefined,
    env: {
      // The inspector listens on loopback over http.
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      WEBHOOK_POLL_INTERVAL: '100ms',
      WEBHOOK_RETRY_SCHEDULE: '1s,2s,5s',
    },
  });
  const organization = await server.createOrganization({ name: 'Portal School' });
  organizationId = organization.id;
  await server.createUser(organization.id, EMAIL, PASSWORD);
  inspector = createInspector({ secrets: () => inspectorSecrets });
  await new Promise<void>((resolve) => inspector.server.listen(0, '127.0.0.1', resolve));
  inspectorUrl = `http://127.0.0.1:${(inspector.server.address() as AddressInfo).port}/webhooks`;
  browser = await launchChromium();
  context = await loopbackContext(browser, refused);
  page = await context.newPage();
  page.on('dialog', (dialog) => void dialog.accept());
}, 120_000);

afterAll(async () => {
  await context?.close();
  await browser?.close();
  await new Promise<void>((resolve) =>
    inspector ? inspector.server.close(() => resolve()) : resolve(),
  );
  inspector?.server.closeAllConnections();
  await server?.close();
});

afterEach(() => {
  // Loopback only: the browser asked for nothing outside (a refused request would show here).
  expect(refused).toEqual([]);
});

async function expectAccessible(name: string): Promise<void> {
  expect({ page: name, violations: await allViolations(page) }).toEqual({
    page: name,
    violations: [],
  });
}

/** Waits (up to 20 s) for something that happens in the background, such as a delivery. */
async function until(check: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${check.toString()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function portal(pathname = ''): string {
  return `${server.url}/portal${pathname}`;
}

async function storedPortalToken(): Promise<string> {
  const raw = await page.evaluate(() => sessionStorage.getItem('platform.portal.session'));
  return (JSON.parse(raw!) as { accessToken: string }).accessToken;
}

describe('the portal in Chromium', () => {
  test('signed out, it offers sign-in; the sign-in is the platform’s own OAuth page', async () => {
    await page.goto(portal('/tokens'));
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe(
      'Platform developer portal',
    );
    await expectAccessible('signed out');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/oauth\/interaction\//);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe(
      'Sign in to continue to Platform portal',
    );
    await expectAccessible('OAuth sign-in page');
    await screenshot(page, 'sign-in');
  });

  test('a member signs in (code + PKCE, no consent page) and lands on the page asked for', async () => {
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(portal('/tokens'));
    await page.getByRole('heading', { name: 'Personal access tokens' }).waitFor();
    // The token the portal holds acts for the member's organization, with its own client id.
    const info = await fetch(`${server.url}/v1/token`, {
      headers: { Authorization: `Bearer ${await storedPortalToken()}` },
    }).then((r) => r.json() as Promise<{ organization_id: string; type: string; user_id: string }>);
    expect(info).toMatchObject({ organization_id: organizationId, type: 'oauth_access_token' });
    // The header names the organization (issue 34: it showed the id).
    await expect(page.locator('header.top').textContent()).resolves.toContain('Portal School');
    await expectAccessible('tokens (empty)');
  });

  let patPrefix = '';
  let pat = '';

  test('creates a personal access token: shown once with a curl line, and it answers 200', async () => {
    // The list comes first; "New token" opens the form in a dialog.
    await page.getByRole('button', { name: 'New token' }).click();
    const form = page.getByRole('dialog', { name: 'Create a token' });
    await form.getByLabel('Name').fill('nightly sync');
    await form.getByRole('radio', { name: 'Custom' }).check();
    await form.getByRole('checkbox', { name: 'students:read' }).check();
    await form.getByLabel('Expires').selectOption('30');
    await form.getByRole('button', { name: 'Create token' }).click();
    await page.getByRole('heading', { name: 'Token “nightly sync” created' }).waitFor();
    pat = await page.getByLabel('Token', { exact: true }).inputValue();
    expect(pat).toMatch(/^pat_/);
    const curl = await page.getByLabel('Try it with curl').inputValue();
    expect(curl).toBe(
      `curl -H "Authorization: Bearer ${pat}" "${server.url}/v1/students?per_page=5"`,
    );
    await page.getByRole('button', { name: 'Copy Token' }).click();
    await page.getByText('Copied.').waitFor();
    await expect(page.evaluate(() => navigator.clipboard.readText())).resolves.toBe(pat);

    const students = await fetch(`${server.url}/v1/students`, {
      headers: { Authorization: `Bearer ${pat}` },
    });
    expect(students.status).toBe(200);
    // The list shows it with its prefix, scopes and expiry (about 30 days away).
    const row = page.getByRole('row', { name: /nightly sync/ });
    patPrefix = pat.slice(0, 8);
    await expect(row.textContent()).resolves.toContain('students:read');
    await expect(row.getByRole('cell').nth(0).textContent()).resolves.toContain(patPrefix);
    await expectAccessible('tokens (secret shown)');
    await screenshot(page, 'tokens');
  });

  test('revoking the token in the list makes its next call 401', async () => {
    await page.getByRole('button', { name: /^Revoke token nightly sync/ }).click();
    const dialog = page.getByRole('dialog', { name: 'Revoke this token?' });
    await dialog.getByLabel(/to confirm/).fill('nightly sync');
    await dialog.getByRole('button', { name: 'Revoke token' }).click();
    await page.getByText('Token “nightly sync” revoked.').waitFor();
    // It stays listed, marked revoked, with nothing left to do on it.
    const row = page.getByRole('row', { name: /nightly sync/ });
    await expect(row.textContent()).resolves.toContain('Revoked');
    await expect(row.getByRole('button').count()).resolves.toBe(0);
    const after = await fetch(`${server.url}/v1/students`, {
      headers: { Authorization: `Bearer ${pat}` },
    });
    expect(after.status).toBe(401);
  });

  let endpointId = '';

  test('registers a webhook endpoint at the inspector; its secret is shown once', async () => {
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('heading', { level: 1, name: 'Webhook endpoints' }).waitFor();
    await expectAccessible('webhooks (empty)');
    await page.getByLabel('Endpoint URL').fill(inspectorUrl);
    await page.getByLabel('Description (optional)').fill('the inspector');
    await page.getByRole('checkbox', { name: 'student.created' }).check();
    await page.getByRole('checkbox', { name: 'course.created' }).check();
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await page.getByRole('heading', { name: 'Endpoint created' }).waitFor();
    const secret = await page.getByLabel('Signing secret', { exact: true }).inputValue();
    expect(secret).toMatch(/^whsec_/);
    inspectorSecrets.push(secret);
    await page.getByRole('link', { name: 'Manage the endpoint and send a test event' }).click();
    await page.getByRole('heading', { level: 1, name: 'Webhook endpoint' }).waitFor();
    endpointId = new URL(page.url()).pathname.split('/').pop()!;
    expect(endpointId).toMatch(/^whe_/);
  });

  test('sends a test event: delivered and verified by the inspector, with status and latency shown', async () => {
    await page.getByRole('button', { name: 'Send test event' }).click();
    await page.getByText('Test event queued; its delivery appears below.').waitFor();
    const row = page.locator('table.hook-deliveries tbody tr').first();
    await row.locator('.hook-status', { hasText: 'succeeded' }).waitFor({ timeout: 20_000 });
    // Last response: the status and latency.
    await expect(row.locator('td').nth(4).textContent()).resolves.toMatch(/^204 · \d+ ms$/);
    const received = inspector.deliveries();
    expect(received).toHaveLength(1);
    expect(received[0]).toMatchObject({ verified: true, event: { type: 'ping' } });
    await expectAccessible('webhook endpoint (delivered)');
    await screenshot(page, 'webhook-endpoint');
  });

  test('redelivers: a second verified attempt with the same webhook-id', async () => {
    const webhookId = inspector.deliveries()[0]!.webhookId;
    await page
      .getByRole('button', { name: /^ping delivery msg_/ })
      .first()
      .click();
    const panel = page.getByRole('dialog', { name: `Delivery ${webhookId}` });
    await panel.getByRole('button', { name: 'Redeliver' }).click();
    await page.getByText(/queued again/).waitFor();
    await until(() => inspector.deliveries().length === 2);
    const [again] = inspector.deliveries();
    expect(again).toMatchObject({ verified: true, webhookId });
    await panel.getByRole('heading', { name: '2 attempts' }).waitFor({ timeout: 20_000 });
    await panel.getByRole('button', { name: 'Close' }).click();
    await page.getByRole('button', { name: 'Refresh deliveries' }).click();
    await expect(
      page.locator('table.hook-deliveries tbody tr').first().locator('td').nth(3).textContent(),
    ).resolves.toBe('2');
  });

  test('rotates the secret and shows the 24-hour overlap; the endpoint edits', async () => {
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    await page
      .getByRole('dialog', { name: 'Rotate the signing secret?' })
      .getByRole('button', { name: 'Rotate secret' })
      .click();
    await page.getByRole('heading', { name: 'New signing secret' }).waitFor();
    await expect(
      page.getByText(/\(24 hours\) every delivery carries two signatures/).count(),
    ).resolves.toBe(1);
    await page.getByRole('button', { name: 'Edit' }).click();
    await page
      .getByRole('dialog', { name: 'Edit endpoint' })
      .getByLabel('Description (optional)')
      .fill('the inspector, renamed');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByText('Endpoint saved.').waitFor();
    const stored = await fetch(`${server.url}/v1/webhook_endpoints/${endpointId}`, {
      headers: { Authorization: `Bearer ${await storedPortalToken()}` },
    }).then((r) => r.json() as Promise<{ description: string; owner: unknown; enabled: boolean }>);
    // Made in the portal: the organization's endpoint, not bound to the member's session.
    expect(stored).toMatchObject({
      description: 'the inspector, renamed',
      owner: null,
      enabled: true,
    });
    await expectAccessible('webhook endpoint (rotated)');
  });

  test('registers a confidential OAuth app, rotates its secret, edits it and deletes it', async () => {
    await page.getByRole('link', { name: 'OAuth apps' }).click();
    await page.getByRole('heading', { level: 1, name: 'OAuth apps' }).waitFor();
    await page.getByLabel('Name').fill('Gradebook sync');
    await page
      .getByLabel('Redirect URIs (one per line)')
      .fill('https://gradebook.school.test/callback');
    await page.getByRole('checkbox', { name: 'courses:read' }).check();
    await page.getByRole('button', { name: 'Register app' }).click();
    await page.getByRole('heading', { name: 'Client secret of “Gradebook sync”' }).waitFor();
    const first = await page.getByLabel('Client secret', { exact: true }).inputValue();
    expect(first).toMatch(/^ocs_/);
    await expectAccessible('OAuth apps');
    await screenshot(page, 'oauth-apps');
    await page.getByRole('button', { name: /^Rotate secret of app Gradebook sync/ }).click();
    await page
      .getByRole('dialog', { name: 'Rotate the client secret?' })
      .getByRole('button', { name: 'Rotate secret' })
      .click();
    await until(
      async () => (await page.getByLabel('Client secret', { exact: true }).inputValue()) !== first,
    );

    // Edit: a URI the server refuses keeps the dialog open with its reason; a good one saves.
    await page.getByRole('button', { name: /^Edit app Gradebook sync/ }).click();
    const editor = page.getByRole('dialog', { name: 'Edit “Gradebook sync”' });
    await editor.getByLabel('Name').fill('Gradebook sync 2');
    const uris = editor.getByLabel('Redirect URIs (one per line)');
    await uris.fill('http://gradebook.school.test/return');
    await editor.getByRole('button', { name: 'Save changes' }).click();
    // The server's reason once, naming the field (not repeated from its field errors).
    await expect(editor.getByRole('alert').textContent()).resolves.toBe(
      'redirect_uris.0: must use https (http is allowed only on localhost, 127.0.0.1 or [::1])',
    );
    await expectAccessible('OAuth app editor, refused');
    await screenshot(page, 'oauth-app-edit');
    // On a phone, dark: the dialog and its reason still fit, with nothing to scroll sideways to.
    await page.setViewportSize({ width: 375, height: 800 });
    await page.emulateMedia({ colorScheme: 'dark' });
    await expectAccessible('OAuth app editor, refused, phone, dark');
    await expectActionsOnScreen(page, 'OAuth app editor, phone');
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.emulateMedia({ colorScheme: 'light' });
    await uris.fill('https://gradebook.school.test/return\nhttp://127.0.0.1:8080/cb');
    await editor.getByRole('button', { name: 'Save changes' }).click();
    await page.getByText('“Gradebook sync 2” saved.').waitFor();
    await expect(editor.count()).resolves.toBe(0);
    const edited = page.getByRole('button', { name: /^Edit app Gradebook sync 2/ });
    await expect(edited.evaluate((el) => el === document.activeElement)).resolves.toBe(true);
    await page
      .getByText('https://gradebook.school.test/return, http://127.0.0.1:8080/cb')
      .waitFor();
    const stored = await fetch(`${server.url}/v1/oauth_clients?q=Gradebook`, {
      headers: { Authorization: `Bearer ${await storedPortalToken()}` },
    }).then((r) => r.json() as Promise<{ data: { name: string; redirect_uris: string[] }[] }>);
    expect(stored.data).toEqual([
      expect.objectContaining({
        name: 'Gradebook sync 2',
        redirect_uris: ['https://gradebook.school.test/return', 'http://127.0.0.1:8080/cb'],
      }),
    ]);

    await page.getByRole('button', { name: /^Delete app Gradebook sync 2/ }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete this app?' });
    await dialog.getByLabel(/to confirm/).fill('Gradebook sync 2');
    await dialog.getByRole('button', { name: 'Delete app' }).click();
    await page.getByText('“Gradebook sync 2” deleted.').waitFor();
    await expect(
      page.getByRole('heading', { level: 3, name: 'Gradebook sync 2' }).count(),
    ).resolves.toBe(0);
  });

  test('keyboard: the skip link comes first and leads to the content; focus is visible', async () => {
    await page.goto(portal('/tokens'));
    await page.getByRole('heading', { level: 1, name: 'Personal access tokens' }).waitFor();
    await page.keyboard.press('Tab');
    const focused = await page.evaluate(() => ({
      text: document.activeElement?.textContent,
      outline: getComputedStyle(document.activeElement!).outlineStyle,
    }));
    expect(focused).toEqual({ text: 'Skip to content', outline: 'solid' });
    // Enter on it moves on to the content: the next Tab reaches the page's first control.
    await page.keyboard.press('Enter');
    await page.keyboard.press('Tab');
    await expect(page.evaluate(() => document.activeElement?.textContent)).resolves.toBe(
      'New token',
    );
    // Moving within the app puts focus on the new page's heading (once its chunk has loaded).
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('heading', { level: 1, name: 'Webhook endpoints' }).waitFor();
    await expect(page.evaluate(() => document.activeElement?.textContent)).resolves.toBe(
      'Webhook endpoints',
    );
  });

  test('narrow screens: nothing is wider than a 360-pixel viewport', async () => {
    await page.setViewportSize({ width: 360, height: 800 });
    for (const route of ['/tokens', '/webhooks', `/webhooks/${endpointId}`, '/oauth-apps']) {
      await page.goto(portal(route));
      await page.getByRole('heading', { level: 1 }).waitFor();
      await page.waitForLoadState('networkidle');
      // The page must not scroll sideways; elements past the edge are named (a table scrolls
      // inside its own wrapper, so what is in one does not count).
      const tooWide = await page.evaluate(() => {
        const width = document.documentElement.clientWidth;
        return [...document.querySelectorAll('body *')]
          .filter((el) => el.getBoundingClientRect().right > width)
          .filter((el) => !el.closest('.table-wrap'))
          .map((el) => `${el.tagName.toLowerCase()}.${el.className}`)
          .slice(0, 5);
      });
      const overflow = await page.evaluate(
        () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
      );
      expect({ route, overflow, tooWide }).toEqual({ route, overflow: 0, tooWide: [] });
    }
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  // Issue 31, finding 4, and issue 41: "Sign out" opened a confirmation page, and a person who
  // left it (or, before, the whole sign-out) was signed in again without a password.
  test('signing out ends the portal token and the sign-in session in one step: the password is asked again', async () => {
    await page.goto(portal('/tokens'));
    await page.getByRole('heading', { level: 1, name: 'Personal access tokens' }).waitFor();
    const token = await storedPortalToken();
    await page.getByRole('button', { name: 'Sign out' }).click();
    // No confirmation to leave: straight back to the signed-out portal.
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/portal/');
    await expect(
      fetch(`${server.url}/v1/token`, { headers: { Authorization: `Bearer ${token}` } }).then(
        (r) => r.status,
      ),
    ).resolves.toBe(401);

    // Leave for another page, come back, sign in: the password is asked.
    await page.goto(`${server.url}/docs`);
    await page.goto(portal('/tokens'));
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByLabel('Password').waitFor();
    expect(page.url()).toContain('/oauth/interaction/');
  });
});
