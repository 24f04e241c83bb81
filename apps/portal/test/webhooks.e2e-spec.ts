/**
 * Webhooks as a developer reads them (issue 48), in Chromium against the real server (SQLite;
 * PostgreSQL with TEST_DATABASE_URL, Redis with TEST_REDIS_URL) and loopback receivers that
 * record every request: the list's health badge, 24-hour success rate and the warning before an
 * automatic disable; the endpoint page as a compact table of deliveries whose side panel shows
 * the headers the receiver got (signatures withheld), what a failing receiver answered, and
 * redelivers. At 1280 and 375 px, light
 * and dark, axe-core finding nothing.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestServer } from '@platform/server/testing';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchChromium, loopbackContext, screenshot, expectPortalBuilt } from './browser';
import {
  expectAccessible,
  expectNoSidewaysScroll,
  startProductServer,
  waitFor,
} from './product-checks';

const PASSWORD = 'correct horse battery staple';
const EMAIL = 'admin@hooks-school.test';
const DELIVERIES = 25;

interface Recorder {
  server: Server;
  url: string;
  received: { headers: IncomingHttpHeaders }[];
}

/** A receiver on loopback that keeps each request's headers and answers `status`. */
async function recorder(status: number): Promise<Recorder> {
  const received: Recorder['received'] = [];
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received.push({ headers: req.headers });
      res.statusCode = status;
      res.end(status >= 400 ? 'down for maintenance' : undefined);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { server, url: `http://127.0.0.1:${port}/hooks`, received };
}

/** The headers as the side panel should list them: the signature's material withheld. */
function expectedHeaders(headers: IncomingHttpHeaders): string {
  return Object.entries(headers)
    .map(([name, value]) =>
      name === 'webhook-signature'
        ? `${name}: ${String(value)
            .split(' ')
            .map(() => 'v1,<withheld>')
            .join(' ')}`
        : `${name}: ${String(value)}`,
    )
    .sort()
    .join('\n');
}

const sorted = (text: string) => text.split('\n').sort().join('\n');

let server: TestServer;
let browser: Browser;
let healthy: Recorder;
let broken: Recorder;
let token = '';
let healthyId = '';
let brokenId = '';
const refused: string[] = [];
const contexts: BrowserContext[] = [];

function portal(pathname = ''): string {
  return `${server.url}/portal${pathname}`;
}

async function api<T>(pathname: string, init: RequestInit = {}): Promise<T> {
  const res = await fetch(`${server.url}${pathname}`, {
    ...init,
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
  });
  expect(res.status).toBeLessThan(300);
  return (await res.json()) as T;
}

const deliveryCount = (id: string, status: string) =>
  api<{ meta: { total: number } }>(`/v1/webhook_endpoints/${id}/deliveries?status=${status}`).then(
    (r) => r.meta.total,
  );

beforeAll(async () => {
  expectPortalBuilt();
  server = await startProductServer();
  [healthy, broken] = await Promise.all([recorder(204), recorder(503)]);
  const organization = await server.createOrganization({ name: 'Hooks School' });
  await server.createUser(organization.id, EMAIL, PASSWORD, { role: 'admin' });
  token = (await server.createToken(organization.id, ['all'])).token;
  const create = (url: string, description: string) =>
    api<{ id: string }>('/v1/webhook_endpoints', {
      method: 'POST',
      body: JSON.stringify({ url, events: ['*'], description }),
    }).then((e) => e.id);
  healthyId = await create(healthy.url, 'the good one');
  brokenId = await create(broken.url, 'the broken one');
  for (let i = 0; i < DELIVERIES; i++)
    await api(`/v1/webhook_endpoints/${healthyId}/test`, { method: 'POST' });
  await api(`/v1/webhook_endpoints/${brokenId}/test`, { method: 'POST' });
  await waitFor(async () => (await deliveryCount(healthyId, 'succeeded')) === DELIVERIES);
  await waitFor(async () => (await deliveryCount(brokenId, 'failed')) === 1);
  browser = await launchChromium();
}, 180_000);

afterAll(async () => {
  for (const context of contexts) await context.close();
  await browser?.close();
  for (const r of [healthy, broken]) {
    r?.server.closeAllConnections();
    await new Promise<void>((resolve) => (r ? r.server.close(() => resolve()) : resolve()));
  }
  await server?.close();
});

afterEach(() => expect(refused).toEqual([]));

describe.each([
  { width: 1280, height: 900 },
  { width: 375, height: 800 },
])('webhooks at $width px', (viewport) => {
  let page: Page;

  beforeAll(async () => {
    const context = await loopbackContext(browser, refused, viewport);
    contexts.push(context);
    page = await context.newPage();
    await page.goto(portal('/webhooks'));
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/oauth\/interaction\//);
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(portal('/webhooks'));
  }, 60_000);

  test('the list: a failing endpoint says Failing, 0 %, and when it will be disabled', async () => {
    await page.getByRole('heading', { level: 1, name: 'Webhook endpoints' }).waitFor();
    const failing = page.locator(`li[data-endpoint="${brokenId}"]`);
    await failing.locator('.hook-badge', { hasText: 'Failing' }).waitFor();
    await expect(failing.locator('.hook-rate').textContent()).resolves.toBe(
      '0% of 2 attempts in 24 h',
    );
    const stored = await api<{ failing_since: string; disables_at: string }>(
      `/v1/webhook_endpoints/${brokenId}`,
    );
    const shown = (iso: string) =>
      page.evaluate(
        (at) => new Date(at).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' }),
        iso,
      );
    await expect(failing.locator('.hook-warning').textContent()).resolves.toBe(
      `Failing since ${await shown(stored.failing_since)}; it will be disabled at ${await shown(stored.disables_at)} unless a delivery succeeds.`,
    );
    const good = page.locator(`li[data-endpoint="${healthyId}"]`);
    await expect(good.locator('.hook-badge').textContent()).resolves.toBe('Healthy');
    await expect(good.locator('.hook-rate').textContent()).resolves.toBe(
      `100% of ${healthy.received.length} attempts in 24 h`,
    );
    await expect(good.locator('.hook-warning').count()).resolves.toBe(0);
    await expectNoSidewaysScroll(page, 'webhooks list');
    if (viewport.width === 1280) await screenshot(page, 'webhooks-health');
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await expectAccessible(page, `webhooks list (${scheme}, ${viewport.width})`);
    }
    await page.emulateMedia({ colorScheme: 'light' });
  });

  test('the endpoint page is a compact table; a row opens the headers sent, and redelivers', async () => {
    await page.goto(portal(`/webhooks/${healthyId}`));
    await page.getByText(`Showing 1–20 of ${DELIVERIES} deliveries`).waitFor();
    // Summary and actions first, then the table: not a wall of cards.
    await expect(page.locator('table.hook-deliveries tbody tr').count()).resolves.toBe(20);
    const height = await page.evaluate(() => document.documentElement.scrollHeight);
    expect(height).toBeLessThan(viewport.width === 1280 ? 2500 : 6000);
    await page
      .getByTestId('success-rate')
      .filter({ hasText: /attempts/ })
      .waitFor();
    await expect(page.getByTestId('success-rate').textContent()).resolves.toBe(
      `100% (${healthy.received.length} of ${healthy.received.length} attempts)`,
    );

    await page.locator('table.hook-deliveries tbody tr').first().click();
    const panel = page.getByRole('dialog', { name: /^Delivery msg_/ });
    await panel.waitFor();
    const id = (await panel.getByRole('heading', { level: 2 }).textContent())!.split(' ')[1]!;
    const sent = () => healthy.received.filter((r) => r.headers['webhook-id'] === id);
    // Each attempt so far (the other width's run redelivered this one) as its receiver got it.
    const before = sent().length;
    expect(before).toBeGreaterThanOrEqual(1);
    for (let n = 1; n <= before; n++) {
      const shown = await panel.getByLabel(`Headers sent with attempt ${n}`).textContent();
      expect(sorted(shown!)).toBe(expectedHeaders(sent()[n - 1]!.headers));
      expect(shown).not.toContain(String(sent()[n - 1]!.headers['webhook-signature']).slice(3));
    }
    await panel.getByText(/"type": "ping"/).waitFor();
    await expectNoSidewaysScroll(page, 'delivery panel');
    if (viewport.width === 1280) await screenshot(page, 'webhook-delivery-panel');
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await expectAccessible(page, `delivery panel (${scheme}, ${viewport.width})`);
    }
    await page.emulateMedia({ colorScheme: 'light' });

    await panel.getByRole('button', { name: 'Redeliver' }).click();
    await page.getByText(`Delivery ${id} queued again.`).waitFor();
    await waitFor(() => Promise.resolve(sent().length === before + 1));
    // The panel follows the delivery: its new attempt, with the headers that went out.
    const again = panel.getByLabel(`Headers sent with attempt ${before + 1}`);
    await again.waitFor({ timeout: 20_000 });
    expect(sorted((await again.textContent())!)).toBe(expectedHeaders(sent()[before]!.headers));
    await panel.getByRole('button', { name: 'Close' }).click();
    await expect(panel.count()).resolves.toBe(0);
  });

  test('the failing endpoint page warns, says Failing in dark too, and its delivery shows the answer', async () => {
    await page.goto(portal(`/webhooks/${brokenId}`));
    await page.locator('.hook-summary .hook-badge', { hasText: 'Failing' }).waitFor();
    await page.locator('.hook-summary .hook-warning').waitFor();
    await page
      .getByTestId('success-rate')
      .filter({ hasText: /attempts/ })
      .waitFor();
    await expect(page.getByTestId('success-rate').textContent()).resolves.toBe(
      '0% (0 of 2 attempts)',
    );
    await page.locator('table.hook-deliveries .hook-status', { hasText: 'failed' }).waitFor();
    await expectNoSidewaysScroll(page, 'failing endpoint');
    if (viewport.width === 1280) await screenshot(page, 'webhook-endpoint-failing');
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await expectAccessible(page, `failing endpoint (${scheme}, ${viewport.width})`);
    }
    await page.emulateMedia({ colorScheme: 'light' });

    // Its delivery's panel: each attempt's status and the start of what the receiver answered.
    await page.locator('table.hook-deliveries tbody tr').first().click();
    const panel = page.getByRole('dialog', { name: /^Delivery msg_/ });
    await panel.waitFor();
    const attempts = panel.locator('.hook-attempt');
    await expect(attempts.count()).resolves.toBe(2);
    await expect(attempts.locator('.hook-code').allTextContents()).resolves.toEqual(['503', '503']);
    await expect(
      panel
        .getByRole('heading', { level: 4, name: 'Response' })
        .evaluateAll((headings) => headings.map((h) => h.nextElementSibling?.textContent)),
    ).resolves.toEqual(['down for maintenance', 'down for maintenance']);
    await expectNoSidewaysScroll(page, 'failing delivery panel');
    await expectAccessible(page, `failing delivery panel (${viewport.width})`);
    await panel.getByRole('button', { name: 'Close' }).click();
    await expect(panel.count()).resolves.toBe(0);
  });
});
