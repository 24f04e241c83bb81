/**
 * The server's API reference (/docs, Redoc over /openapi.json) in Chromium, as a developer reads
 * it: each operation with its call in TypeScript, PHP and Python beside it, the webhooks, the
 * error codes, and nothing blocked by the page's Content-Security-Policy or fetched off loopback.
 */
import { startTestServer, type TestServer } from '@platform/server/testing';
import type { Browser, BrowserContext, ConsoleMessage, Page } from 'playwright-core';
import { launchChromium, loopbackContext } from './browser';

let server: TestServer;
let browser: Browser;
let context: BrowserContext;
let page: Page;
const refused: string[] = [];
const problems: string[] = [];

beforeAll(async () => {
  server = await startTestServer({
    postgresAdminUrl: process.env.TEST_DATABASE_URL || undefined,
    redisUrl: process.env.TEST_REDIS_URL || undefined,
  });
  browser = await launchChromium();
  context = await loopbackContext(browser, refused);
  page = await context.newPage();
  // A CSP refusal or a script error shows in the console (or as a page error).
  page.on('console', (message: ConsoleMessage) => {
    if (message.type() === 'error') problems.push(message.text());
  });
  page.on('pageerror', (error) => problems.push(error.message));
  await page.goto(`${server.url}/docs`);
  await page.getByRole('heading', { name: 'List students', level: 2 }).waitFor({ timeout: 60_000 });
}, 120_000);

afterAll(async () => {
  await context?.close();
  await browser?.close();
  await server?.close();
});

afterEach(() => {
  expect(refused).toEqual([]);
  // Redoc's "API docs by Redocly" credit asks its CDN for a logo, which the CSP refuses (the
  // credit then shows without it): the one refusal expected, and nothing left the machine.
  expect(problems.filter((p) => !p.includes("'https://cdn.redoc.ly/redoc/logo-mini.svg'"))).toEqual(
    [],
  );
});

describe('the API reference at /docs', () => {
  it('shows each operation with its call in TypeScript, PHP and Python', async () => {
    const operation = page.locator('[data-section-id="operation/students.retrieve"]');
    await operation.scrollIntoViewIfNeeded();
    for (const [language, call] of [
      ['Python', 'client.students.retrieve("stu_01JD6Y3ZK8R5V2N3M4P5Q6R7S8")'],
      ['PHP', "$client->students->retrieve('stu_01JD6Y3ZK8R5V2N3M4P5Q6R7S8')"],
      ['TypeScript', "platform.students.retrieve('stu_01JD6Y3ZK8R5V2N3M4P5Q6R7S8')"],
    ] as const) {
      await operation.getByRole('tab', { name: language, exact: true }).click();
      await expect(operation.getByText(call).isVisible()).resolves.toBe(true);
    }
    // Every operation of the document has the three.
    const tabs = await page.evaluate(() =>
      Array.from(document.querySelectorAll('[data-section-id^="operation/"]'))
        .filter(
          (section) => !section.getAttribute('data-section-id')!.startsWith('operation/webhooks.'),
        )
        .map((section) =>
          Array.from(section.querySelectorAll('[role=tab]'))
            .map((tab) => tab.textContent)
            .filter((name) => ['TypeScript', 'PHP', 'Python'].includes(name ?? ''))
            .join(' '),
        ),
    );
    expect(tabs.length).toBeGreaterThan(60);
    expect(new Set(tabs)).toEqual(new Set(['TypeScript PHP Python']));
  });

  it('shows the webhooks, each with its payload', async () => {
    const webhook = page.locator('[data-section-id="operation/webhooks.enrollment.active"]');
    await webhook.scrollIntoViewIfNeeded();
    const text = await webhook.innerText();
    expect(text).toContain('The enrollment.active event');
    expect(text).toContain('Subscribing needs enrollments:read');
    await expect(webhook.getByRole('tab', { name: 'Payload' }).isVisible()).resolves.toBe(true);
    await expect(
      page.locator('[data-section-id="operation/webhooks.exam_result.published"]').count(),
    ).resolves.toBe(1);
  });

  it('lists the error codes with their status and title', async () => {
    const errors = page.locator('[data-section-id="section/Errors"]');
    await errors.scrollIntoViewIfNeeded();
    const text = await errors.innerText();
    expect(text).toMatch(/insufficient_scope\s+403\s+Insufficient scope/);
    expect(text).toMatch(/rate_limited\s+429\s+Too many requests/);
    expect(text).toContain('/docs/errors');
  });

  it('names this server in the document it renders', async () => {
    const response = await page.request.get(`${server.url}/openapi.json`);
    const document = (await response.json()) as { servers: unknown };
    expect(document.servers).toEqual([{ url: server.url, description: 'This server' }]);
  });
});
