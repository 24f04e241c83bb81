/**
 * "Where you're signed in" on the account page (issue 46), in Chromium against the real server:
 * a member signed in on two browsers, with an app they approved, sees all three and signs the
 * other browser out and withdraws the app; the server then refuses their tokens.
 */
import { createHash, randomBytes } from 'node:crypto';
import { authorizeInBrowser, startTestServer, type TestServer } from '@platform/server/testing';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { expectPortalBuilt, launchChromium, loopbackContext } from './browser';
import { apiCaller, expectAccessible, portalToken } from './product-checks';

const EMAIL = 'roaming@sessions-school.test';
const PASSWORD = 'correct horse battery staple';
const REDIRECT_URI = 'https://gradebook.example/callback';

let server: TestServer;
let organizationId: string;
let browser: Browser;
const contexts: BrowserContext[] = [];
const refused: string[] = [];

beforeAll(async () => {
  expectPortalBuilt();
  server = await startTestServer({
    postgresAdminUrl: process.env.TEST_DATABASE_URL || undefined,
    redisUrl: process.env.TEST_REDIS_URL || undefined,
  });
  organizationId = (await server.createOrganization({ name: 'Sessions School' })).id;
  await server.createUser(organizationId, EMAIL, PASSWORD, { role: 'developer' });
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  for (const context of contexts) await context.close();
  await browser?.close();
  await server?.close();
});

afterEach(() => expect(refused).toEqual([]));

/** A browser of its own (its own sign-in cookie), signed in to the portal's account page. */
async function signedInPage(): Promise<Page> {
  const context = await loopbackContext(browser, refused);
  contexts.push(context);
  const page = await context.newPage();
  await page.goto(`${server.url}/portal/account`);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(/\/oauth\/interaction\//);
  await page.getByLabel('Email').fill(EMAIL);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${server.url}/portal/account`);
  return page;
}

/** The member approves an app on the server's consent page; the app's access token. */
async function approvedApp(name: string): Promise<string> {
  const app = await server.createOAuthClient(organizationId, {
    name,
    type: 'confidential',
    redirect_uris: [REDIRECT_URI],
  });
  const verifier = randomBytes(32).toString('base64url');
  const url = new URL('/oauth/authorize', server.url);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: app.id,
    redirect_uri: REDIRECT_URI,
    scope: 'students:read',
    state: 'app',
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  }).toString();
  const { callback } = await authorizeInBrowser(server, url, { email: EMAIL, password: PASSWORD });
  const token = await fetch(`${server.url}/oauth/token`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/x-www-form-urlencoded',
      Authorization: `Basic ${Buffer.from(`${app.id}:${app.client_secret}`).toString('base64')}`,
    },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: callback.searchParams.get('code')!,
      redirect_uri: REDIRECT_URI,
      code_verifier: verifier,
    }),
  });
  return ((await token.json()) as { access_token: string }).access_token;
}

async function confirmIn(page: Page, title: string, button: string): Promise<void> {
  await page.getByRole('dialog', { name: title }).getByRole('button', { name: button }).click();
}

const rows = (section: Locator, name: RegExp | string) =>
  section.getByRole('row', { name }).count();

test('lists the browsers and the app, signs the other browser out and withdraws the app', async () => {
  const here = await signedInPage();
  const elsewhere = await signedInPage();
  const appToken = await approvedApp('Gradebook sync');
  const api = apiCaller(server);
  const elsewhereToken = await portalToken(elsewhere);

  await here.reload();
  const sessions = here.locator('section[aria-labelledby="sessions"]');
  await sessions.getByRole('row', { name: /This browser/ }).waitFor();
  await expect(rows(sessions, /Chrome on Linux/)).resolves.toBe(2);
  await expect(rows(sessions, /Gradebook sync/)).resolves.toBe(1);
  await expectAccessible(here, 'account sessions');

  await sessions.getByRole('button', { name: 'Sign out Chrome on Linux' }).click();
  await confirmIn(here, 'Sign out this browser?', 'Sign out');
  await here.getByText('Chrome on Linux is signed out.').waitFor();
  await expect(rows(sessions, /Chrome on Linux/)).resolves.toBe(1);
  expect((await api(elsewhereToken, '/v1/user')).status).toBe(401);

  expect((await api(appToken, '/v1/students')).status).toBe(200);
  await sessions.getByRole('button', { name: 'Withdraw access Gradebook sync' }).click();
  await confirmIn(here, 'Withdraw this app’s access?', 'Withdraw access');
  await here.getByText('Gradebook sync no longer acts for you.').waitFor();
  await expect(rows(sessions, /Gradebook sync/)).resolves.toBe(0);
  expect((await api(appToken, '/v1/students')).status).toBe(401);

  // The browser the app was approved in (the server's consent page) is the last other one.
  await sessions.getByRole('button', { name: 'Sign out every other browser' }).click();
  await here.getByText('Every other browser is signed out.').waitFor();
  await expect(rows(sessions, /This browser/)).resolves.toBe(1);
  await expect(sessions.getByRole('row').count()).resolves.toBe(2);
  expect((await api(await portalToken(here), '/v1/user')).status).toBe(200);
});
