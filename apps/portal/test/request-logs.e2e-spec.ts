/**
 * The "Request logs" and "Usage" pages, in Chromium at 1280 and 375 pixels wide, against the
 * real server (SQLite; PostgreSQL with TEST_DATABASE_URL): an admin and a developer page through
 * their organization's API requests with the filters, the time range and the page in the URL
 * ("N of M"), open a request's detail (its path, never its query; its time, method, latency and
 * the request id the API answered with), switch the usage range (hour, week, 30 days) and see
 * the charts with their text and table equivalents and the breakdowns; a viewer is told
 * neither page is open to their role; axe-core finds no violation in any state, light or dark.
 */
import { startTestServer, type TestServer } from '@platform/server/testing';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { portalToken } from './product-checks';
import {
  allViolations,
  launchChromium,
  loopbackContext,
  screenshot,
  expectPortalBuilt,
} from './browser';

const PASSWORD = 'correct horse battery staple';

let server: TestServer;
let browser: Browser;
const refused: string[] = [];

beforeAll(async () => {
  expectPortalBuilt();
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

/** Axe in the light theme, then in the dark one (the page left light). */
async function expectAccessibleBothThemes(page: Page, name: string): Promise<void> {
  await expectAccessible(page, name);
  await page.emulateMedia({ colorScheme: 'dark' });
  await expectAccessible(page, `${name} (dark)`);
  await page.emulateMedia({ colorScheme: 'light' });
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
  let setupStarted = '';
  /** The read of a missing student, as the API answered it. */
  const missing = { requestId: '', before: 0, after: 0 };
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
    setupStarted = new Date(Date.now() - 1000).toISOString();
    const call = (pathname: string) =>
      fetch(`${server.url}${pathname}?q=private-value`, {
        headers: { Authorization: `Bearer ${sync.token}` },
      }).then(async (res) => {
        await res.text();
        return res.headers.get('x-request-id') ?? '';
      });
    for (let i = 0; i < 26; i++) await call('/v1/students');
    missing.before = Date.now();
    missing.requestId = await call('/v1/students/stu_01JD6Y3ZK8R5V2N3M4P5Q6R7S8');
    missing.after = Date.now();
    expect(missing.requestId).not.toBe('');
  }, 120_000);

  afterAll(async () => {
    for (const context of contexts) await context.close();
  });

  /** The detail's facts are the request's: its method, when it was answered, the id the API
   * answered with (X-Request-Id) and the latency the API recorded for it. */
  async function expectFactsOfTheMissingRequest(admin: Page, detail: Locator) {
    const facts = Object.fromEntries(
      await detail
        .locator('dl.rlog-fields dt')
        .evaluateAll((dts) =>
          dts.map((dt) => [dt.textContent, dt.nextElementSibling?.textContent?.trim()]),
        ),
    ) as Record<string, string>;
    expect(facts.Method).toBe('GET');
    expect(facts['Request id']).toBe(missing.requestId);
    const at = await detail.locator('dl.rlog-fields time').getAttribute('datetime');
    expect(facts.Time).toContain(`(${at})`);
    expect(Date.parse(at!)).toBeGreaterThanOrEqual(missing.before - 1000);
    expect(Date.parse(at!)).toBeLessThanOrEqual(missing.after + 1000);
    const recorded = (await fetch(
      `${server.url}/v1/request_logs?credential_id=${sync.id}&status_class=4xx`,
      { headers: { Authorization: `Bearer ${await portalToken(admin)}` } },
    ).then((res) => res.json())) as {
      data: { request_id: string; latency_ms: number; created_at: string }[];
    };
    expect(recorded.data.map((entry) => entry.request_id)).toEqual([missing.requestId]);
    expect(recorded.data[0]!.created_at).toBe(at);
    expect(facts.Latency).toBe(`${recorded.data[0]!.latency_ms.toFixed(1)} ms`);
  }

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
    await expectAccessibleBothThemes(admin, 'request logs, page 2');
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

    // The row's detail (axe runs on the 4xx list behind it too): the path with its id, never the query string.
    await row.getByRole('button', { name: /^GET \/v1\/students\/:id\s*, details$/ }).click();
    const detail = admin.getByRole('dialog', { name: 'GET /v1/students/:id' });
    await detail.waitFor();
    const shown = (await detail.textContent()) ?? '';
    expect(shown).toContain('/v1/students/stu_01JD6Y3ZK8R5V2N3M4P5Q6R7S8');
    expect(shown).toContain('not_found');
    expect(shown).toContain(sync.id);
    expect(shown).not.toContain('private-value');
    expect(shown).not.toContain('?q=');
    await expectFactsOfTheMissingRequest(admin, detail);
    await expectAccessibleBothThemes(admin, 'request logs, detail');
    if (viewport.width === 375) await screenshot(admin, 'request-log-detail-phone');
    await admin.keyboard.press('Escape');
    await detail.waitFor({ state: 'detached' });

    await admin.getByLabel('Route').fill('/v1/courses');
    await admin.getByRole('button', { name: 'Apply' }).click();
    await admin.getByText('No requests match these filters.').waitFor();
    expect(new URL(admin.url()).searchParams.get('route')).toBe('/v1/courses');
    await expectAccessible(admin, 'request logs, nothing matches');
    if (viewport.width === 375) await screenshot(admin, 'request-logs-phone');
    else await screenshot(admin, 'request-logs');

    // A time range, in the URL: until before the token's calls, nothing; from their start, all.
    await admin.goto(portal(`/request-logs?credential_id=${sync.id}`));
    await admin.getByLabel('Until').fill('2020-01-01T00:00');
    await admin.getByRole('button', { name: 'Apply' }).click();
    await admin.getByText('No requests match these filters.').waitFor();
    expect(new URL(admin.url()).searchParams.get('created_at[lt]')).toMatch(/^20(19|20)-/);
    const since = `created_at%5Bgte%5D=${encodeURIComponent(setupStarted)}`;
    await admin.goto(portal(`/request-logs?credential_id=${sync.id}&${since}`));
    await admin.getByText('Showing 1–25 of 27 requests').waitFor();
    await expect(admin.getByLabel('From').inputValue()).resolves.toMatch(/^\d{4}-\d\d-\d\dT/);
    await expectAccessibleBothThemes(admin, 'request logs, time range');

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
  }, 120_000);

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

  /** A week: hourly bins over the last 7 days, the table of the busy ones, no sideways scroll. */
  async function expectTheWeek(admin: Page, summary: Locator, table: Locator) {
    const [weekAnswer] = await Promise.all([
      admin.waitForResponse((res) => {
        const url = new URL(res.url());
        return url.pathname === '/v1/usage' && url.searchParams.get('range') === 'week';
      }),
      admin.getByRole('radio', { name: 'Week', exact: true }).check(),
    ]);
    const week = (await weekAnswer.json()) as { requests: Record<string, number | string>[] };
    await admin.getByRole('img', { name: /^API requests, last 7 days by hour: / }).waitFor();
    expect(new URL(admin.url()).searchParams.get('range')).toBe('week');
    const starts = week.requests.map((bin) => Date.parse(String(bin.start)));
    expect(starts.length).toBeGreaterThanOrEqual(7 * 24);
    expect(starts.length).toBeLessThanOrEqual(7 * 24 + 1);
    expect(starts.every((t, i) => i === 0 || t - starts[i - 1]! === 3_600_000)).toBe(true);
    expect(Date.now() - starts[0]!).toBeLessThanOrEqual(7 * 86_400_000 + 3_600_000);
    const weekSummary = (await summary.textContent()) ?? '';
    expect(Number(/(\d+) success/.exec(weekSummary)?.[1])).toBeGreaterThanOrEqual(26);
    expect(weekSummary).toContain('1 client error (4xx)');
    await admin.getByText('API requests as a table').click();
    await expect(table.locator('thead th').first().textContent()).resolves.toBe('Hour');
    const busy = week.requests.filter((bin) =>
      ['success', 'client_error', 'rate_limited', 'server_error'].some(
        (key) => Number(bin[key]) > 0,
      ),
    );
    await expect(table.locator('tbody tr').count()).resolves.toBe(busy.length);
    const weekBox = await admin
      .locator('#usage-requests-heading ~ .chart-box canvas')
      .boundingBox();
    expect(weekBox!.width).toBeGreaterThan(100);
    expect(weekBox!.x + weekBox!.width).toBeLessThanOrEqual(viewport.width);
    await expectNoSidewaysScroll(admin, 'usage, week');
    await expectAccessible(admin, 'usage, week, tables open');
  }

  test('usage: a range picker in the URL, charts with summaries and tables, breakdowns by token, route and status', async () => {
    const admin = await signIn(adminEmail, '/usage');
    await admin.getByRole('heading', { level: 2, name: 'API requests' }).waitFor();
    // The last 24 hours by default.
    await expect(admin.getByRole('radio', { name: 'Day', exact: true }).isChecked()).resolves.toBe(
      true,
    );
    const summary = admin.locator('#usage-requests-summary');
    await admin
      .getByRole('img', { name: /^API requests, last 24 hours by hour: \d+ success/ })
      .waitFor();
    const name = (await summary.textContent()) ?? '';
    // The integration's 26 list calls at least (the portal's own calls count too), and its 404.
    expect(Number(/(\d+) success/.exec(name)?.[1])).toBeGreaterThanOrEqual(26);
    expect(name).toContain('1 client error (4xx)');
    expect(name).toContain('0 server error (5xx)');
    // The canvas is drawn at the page's width, not past it.
    const box = await admin.locator('#usage-requests-heading ~ .chart-box canvas').boundingBox();
    expect(box!.width).toBeGreaterThan(100);
    expect(box!.width).toBeLessThanOrEqual(viewport.width);

    // The breakdowns: the token by name, the route, the 404.
    const byToken = admin.getByRole('region', { name: 'By token or app' });
    await expect(byToken.locator('tbody tr', { hasText: sync.id }).textContent()).resolves.toMatch(
      /^sync.*27\s*1$/,
    );
    const byRoute = admin.getByRole('region', { name: 'By route' });
    await expect(
      byRoute.locator('tbody tr', { hasText: 'GET /v1/students/:id' }).textContent(),
    ).resolves.toMatch(/1\s*1$/);
    const byStatus = admin.getByRole('region', { name: 'By status' });
    await expect(byStatus.locator('tbody tr', { hasText: '404' }).textContent()).resolves.toBe(
      '40411',
    );

    // Another range: new bins (by minute), kept in the URL.
    await admin.getByRole('radio', { name: 'Hour', exact: true }).check();
    await admin.getByRole('img', { name: /^API requests, last hour by minute: / }).waitFor();
    expect(new URL(admin.url()).searchParams.get('range')).toBe('hour');
    await admin.getByText('API requests as a table').click();
    const table = admin.locator('#usage-requests-heading ~ details table');
    await expect(table.locator('thead th').first().textContent()).resolves.toBe('Minute');
    await expect(table.locator('tbody tr').count()).resolves.toBeGreaterThanOrEqual(1);
    await admin.getByText('Webhook deliveries as a table').click();
    await admin.getByText('No deliveries in this range.').waitFor();
    await expectAccessibleBothThemes(admin, 'usage, hour, tables open');
    await expectNoSidewaysScroll(admin, 'usage');
    if (viewport.width === 375) await screenshot(admin, 'usage-phone');
    else await screenshot(admin, 'usage');

    await expectTheWeek(admin, summary, table);

    await admin.goto(portal('/usage?range=30d'));
    await admin.getByRole('img', { name: /^API requests, last 30 days by day: / }).waitFor();
    await expect(admin.getByRole('radio', { name: '30 days' }).isChecked()).resolves.toBe(true);

    const viewer = await signIn(viewerEmail, '/tokens');
    await expect(viewer.getByRole('link', { name: 'Usage' }).count()).resolves.toBe(0);
    await viewer.goto(portal('/usage'));
    await viewer.getByRole('heading', { level: 1, name: 'No access' }).waitFor();
    await expectAccessible(viewer, 'usage (viewer): no access');
  }, 120_000);
});
