/**
 * Issue 48 on a phone and a desktop (375 and 1280 pixels, light and dark): every list page's
 * actions are on screen with no sideways scroll and no word broken mid-word (an endpoint's
 * deliveries table too); the navigation folds behind a Menu button on a narrow screen; the tokens
 * page lists first and creates in a dialog with scope presets ("Everything your role allows" gives
 * exactly the role's scopes, an admin's and a developer's); an expired token says "Expired" and
 * offers no Revoke. axe-core finds no
 * violation (of any impact) in each new state.
 */
import type { TestServer } from '@platform/server/testing';
import type { Browser, Page } from 'playwright-core';
import { launchChromium, loopbackContext, screenshot, expectPortalBuilt } from './browser';
import {
  expectAccessible,
  expectActionsOnScreen,
  expectNoBrokenWords,
  followNav,
  startProductServer,
  waitFor,
} from './product-checks';

const PASSWORD = 'correct horse battery staple';

let server: TestServer;
let browser: Browser;
const refused: string[] = [];

beforeAll(async () => {
  expectPortalBuilt();
  server = await startProductServer();
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

afterEach(() => expect(refused).toEqual([]));

const portal = (pathname = '') => `${server.url}/portal${pathname}`;

async function api(token: string, pathname: string, body?: unknown): Promise<Response> {
  const answer = await fetch(`${server.url}${pathname}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (answer.status >= 400) throw new Error(`${pathname}: ${answer.status} ${await answer.text()}`);
  return answer;
}

/**
 * An organization with something on every list page (its webhook endpoint has a delivery), and a
 * signed-in admin at `width`.
 */
async function furnished(width: number): Promise<{ page: Page; endpointId: string }> {
  const tag = `w${width}`;
  const { id } = await server.createOrganization({ name: `Layout School ${tag}` });
  const email = `administrator-${tag}@layout-school.test`;
  await server.createUser(id, email, PASSWORD, { role: 'admin' });
  await server.createUser(id, `dana.developer-${tag}@layout-school.test`, PASSWORD, {
    role: 'developer',
  });
  await server.insertStudents(id, 3);
  const { token } = await server.createToken(id, ['all'], {
    name: 'Nightly roster synchronisation for the district office',
  });
  const expired = await server.createToken(id, ['students:read'], { name: 'Last year’s import' });
  // An expiry in the past, which the API refuses to set: written to the row.
  await server.dataSource
    .getRepository('PersonalAccessToken')
    .update(expired.id, { expiresAt: new Date(Date.now() - 86_400_000) });
  await api(token, '/v1/invitations', {
    email: `new.teacher-${tag}@layout-school.test`,
    role: 'viewer',
  });
  const endpoint = (await (
    await api(token, '/v1/webhook_endpoints', {
      url: 'http://127.0.0.1:9/hooks',
      events: ['student.created'],
      description: 'Gradebook listener',
    })
  ).json()) as { id: string };
  await api(token, `/v1/webhook_endpoints/${endpoint.id}/test`, {});
  await server.createOAuthClient(id, {
    type: 'public',
    name: 'Gradebook Mobile',
    redirect_uris: ['https://app.example/cb'],
  });
  const started = (await (
    await api(token, '/v1/exports', { collection: 'students', format: 'ndjson' })
  ).json()) as { id: string };
  await waitFor(async () => {
    const exp = (await (await api(token, `/v1/exports/${started.id}`)).json()) as {
      status: string;
    };
    return exp.status === 'succeeded';
  });
  // An import with a refused row, so its row has the error report's button.
  const form = new FormData();
  const csv = 'external_id,student_number,first_name,last_name\nSIS-LAYOUT-1,,Ada,\n';
  form.append('file', new Blob([csv], { type: 'text/csv' }), 'district-roster.csv');
  const imported = (await (
    await fetch(`${server.url}/v1/imports?collection=students`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}` },
      body: form,
    })
  ).json()) as { id: string };
  await waitFor(async () => {
    const imp = (await (await api(token, `/v1/imports/${imported.id}`)).json()) as {
      status: string;
    };
    return imp.status === 'succeeded';
  });

  await api(token, '/v1/sandboxes', { name: 'Integration development sandbox', students: 5 });

  const context = await loopbackContext(browser, refused, { width, height: 800 });
  const page = await context.newPage();
  await page.goto(portal('/tokens'));
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(portal('/tokens'));
  await page.getByRole('heading', { level: 1 }).waitFor();
  return { page, endpointId: endpoint.id };
}

/** Every scope there is, sorted: the API's own list (its OpenAPI document). */
async function allScopes(): Promise<string[]> {
  const openapi = (await (await fetch(`${server.url}/openapi.json`)).json()) as {
    components: {
      schemas: { PersonalAccessToken: { properties: { scopes: { items: { enum: string[] } } } } };
    };
  };
  return [...openapi.components.schemas.PersonalAccessToken.properties.scopes.items.enum].sort();
}

/** Each list page, with a row action it must show (none: the page has no row actions). */
const LIST_PAGES: readonly { route: string; action: RegExp | null }[] = [
  { route: '/tokens', action: /^Revoke token Nightly/ },
  { route: '/members', action: /^Remove/ },
  { route: '/exports', action: /^Download/ },
  { route: '/imports', action: /^Error report/ },
  { route: '/webhooks', action: null },
  // An endpoint's page: its deliveries table, each row's event type opening the delivery.
  { route: '/webhooks/:id', action: /^ping delivery msg_/ },
  { route: '/oauth-apps', action: /^Delete app Gradebook Mobile/ },
  { route: '/audit-log', action: null },
  { route: '/request-logs', action: null },
  { route: '/usage', action: null },
  { route: '/sandboxes', action: /^Switch to Integration development sandbox/ },
];

describe.each([375, 1280])('at %i px', (width) => {
  let page: Page;
  let endpointId = '';

  beforeAll(async () => {
    ({ page, endpointId } = await furnished(width));
  }, 120_000);

  afterAll(async () => {
    await page?.context().close();
  });

  test('every list page: each row action on screen, no sideways scroll, no word broken', async () => {
    for (const { route, action } of LIST_PAGES) {
      await page.goto(portal(route.replace(':id', endpointId)));
      await page.getByRole('heading', { level: 1 }).waitFor();
      await page.waitForLoadState('networkidle');
      if (action) await page.getByRole('button', { name: action }).first().waitFor();
      // On a phone nothing scrolls sideways; on a desktop a wide table may, its actions on screen.
      const actions = await expectActionsOnScreen(page, route, { regionsMayScroll: width > 375 });
      expect({ route, some: actions > 0 }).toEqual({ route, some: true });
      await expectNoBrokenWords(page, route);
    }
    // Invitations share the members page: their Revoke too.
    await page.goto(portal('/members'));
    await page.getByRole('button', { name: /^Revoke invitation for new\.teacher/ }).waitFor();
    await expectActionsOnScreen(page, 'members with an invitation');
    if (width === 375) {
      // On a phone the rows are cards: each cell says what it is (its column's name before it).
      await page
        .getByRole('cell', { name: /^Joined: / })
        .first()
        .waitFor();
      await expectAccessible(page, 'members as cards');
      await screenshot(page, 'members-phone');
      await page.emulateMedia({ colorScheme: 'dark' });
      await expectAccessible(page, 'members as cards (dark)');
      await page.emulateMedia({ colorScheme: 'light' });
    }
  });

  test('the navigation: inline when wide, behind a Menu button (Escape closes) when narrow', async () => {
    await page.goto(portal('/tokens'));
    await page.getByRole('heading', { level: 1 }).waitFor();
    const nav = page.getByRole('navigation', { name: 'Portal' });
    const menu = page.getByRole('button', { name: 'Menu' });
    const header = async () => (await page.locator('header.top').boundingBox())!.height;
    if (width === 1280) {
      await expect(menu.isVisible()).resolves.toBe(false);
      await expect(nav.getByRole('link', { name: 'Members' }).isVisible()).resolves.toBe(true);
      return;
    }
    // Closed: one slim row, not a third of the screen.
    await expect(nav.isVisible()).resolves.toBe(false);
    await expect(menu.getAttribute('aria-expanded')).resolves.toBe('false');
    expect(await header()).toBeLessThan(70);
    await expectAccessible(page, 'menu closed');
    await menu.click();
    await expect(menu.getAttribute('aria-expanded')).resolves.toBe('true');
    await nav.getByRole('link', { name: 'Members' }).waitFor();
    await expect(page.getByRole('button', { name: 'Sign out' }).isVisible()).resolves.toBe(true);
    await expectAccessible(page, 'menu open');
    await page.emulateMedia({ colorScheme: 'dark' });
    await expectAccessible(page, 'menu open (dark)');
    await screenshot(page, 'menu-phone-dark');
    await page.emulateMedia({ colorScheme: 'light' });
    // Escape closes it and puts focus back on the button.
    await nav.getByRole('link', { name: 'Members' }).focus();
    await page.keyboard.press('Escape');
    await expect(nav.isVisible()).resolves.toBe(false);
    await expect(page.evaluate(() => document.activeElement?.textContent)).resolves.toBe('Menu');
    // Following a link closes it too.
    await followNav(page, 'Members');
    await page.getByRole('heading', { level: 1, name: 'Members' }).waitFor();
    await expect(menu.getAttribute('aria-expanded')).resolves.toBe('false');
  });

  test('tokens: the list first; an expired token says “Expired” and offers no Revoke', async () => {
    await page.goto(portal('/tokens'));
    await page.getByText('2 of 2 tokens').waitFor();
    // No form above the list: its fields appear only in the dialog.
    await expect(page.getByLabel('Name').count()).resolves.toBe(0);
    const expired = page.getByRole('row', { name: /Last year’s import/ });
    const title = expired.getByRole('rowheader');
    await expect(title.textContent()).resolves.toBe('Last year’s import Expired');
    await expect(expired.getByRole('button').count()).resolves.toBe(0);
    // Name and state are apart: the pill starts after the name ends (or on the next line).
    const [name, pill] = await Promise.all([
      title.locator('.name').boundingBox(),
      title.locator('.badge').boundingBox(),
    ]);
    expect(pill!.x >= name!.x + name!.width || pill!.y >= name!.y + name!.height).toBe(true);
    await expectAccessible(page, 'tokens with an expired one');
    await page.emulateMedia({ colorScheme: 'dark' });
    await expectAccessible(page, 'tokens with an expired one (dark)');
    await page.emulateMedia({ colorScheme: 'light' });
  });

  test('tokens: created in a dialog with scope presets (“Everything your role allows”: exactly the role’s scopes); the secret is shown once after it', async () => {
    await page.getByRole('button', { name: 'New token' }).click();
    const dialog = page.getByRole('dialog', { name: 'Create a token' });
    await dialog.getByLabel('Name').fill('Read everything');
    await expect(dialog.getByRole('radio', { name: 'Read-only' }).isChecked()).resolves.toBe(true);
    await expectAccessible(page, 'create token dialog');
    await page.emulateMedia({ colorScheme: 'dark' });
    await expectAccessible(page, 'create token dialog (dark)');
    if (width === 1280) await screenshot(page, 'token-dialog-dark');
    await page.emulateMedia({ colorScheme: 'light' });
    await expectActionsOnScreen(page, 'create token dialog');
    // Custom: today's checkboxes, grouped by what they are for.
    await dialog.getByRole('radio', { name: 'Custom' }).check();
    for (const group of ['Organization data', 'Integrations', 'Administration'])
      await dialog.getByRole('group', { name: group }).waitFor();
    await expectAccessible(page, 'create token dialog, custom scopes');
    // Escape closes it, and focus is back on the button that opened it.
    await page.keyboard.press('Escape');
    await expect(page.getByRole('dialog').count()).resolves.toBe(0);
    await expect(page.evaluate(() => document.activeElement?.textContent)).resolves.toBe(
      'New token',
    );

    await page.getByRole('button', { name: 'New token' }).click();
    await dialog.getByLabel('Name').fill('Read everything');
    await dialog.getByRole('button', { name: 'Create token' }).click();
    await page.getByRole('heading', { name: 'Token “Read everything” created' }).waitFor();
    await expect(page.getByRole('dialog').count()).resolves.toBe(0);
    const secret = await page.getByLabel('Token', { exact: true }).inputValue();
    const listed = (await (await api(secret, '/v1/token')).json()) as { scopes: string[] };
    // Read-only for an admin: every read scope, no write.
    expect(listed.scopes).toContain('students:read');
    expect(listed.scopes).toContain('audit_log:read');
    expect(listed.scopes.filter((s) => !s.endsWith(':read'))).toEqual([]);
    await page.getByRole('row', { name: /Read everything/ }).waitFor();

    // Read and write data: the organization's data, none of its administration.
    await page.getByRole('button', { name: 'New token' }).click();
    await dialog.getByLabel('Name').fill('Roster writer');
    await dialog.getByRole('radio', { name: 'Read and write data' }).check();
    await dialog.getByRole('button', { name: 'Create token' }).click();
    await page.getByRole('heading', { name: 'Token “Roster writer” created' }).waitFor();
    const writer = await page.getByLabel('Token', { exact: true }).inputValue();
    const scopes = ((await (await api(writer, '/v1/token')).json()) as { scopes: string[] }).scopes;
    expect(scopes).toEqual(expect.arrayContaining(['students:read', 'students:write']));
    expect(scopes.filter((s) => /^(tokens|members|organization|webhooks):/.test(s))).toEqual([]);
    await expectAccessible(page, 'token created from a preset');

    // Everything your role allows: for an admin, every scope there is (the API's own list).
    const everyScope = await allScopes();
    await page.getByRole('button', { name: 'New token' }).click();
    await dialog.getByLabel('Name').fill('Everything');
    const all = dialog.getByRole('radio', { name: 'Everything your role allows' });
    await all.check();
    await expect(
      page.locator(`#${await all.getAttribute('aria-describedby')}`).textContent(),
    ).resolves.toMatch(new RegExp(` ${everyScope.length} scopes\\.$`));
    await dialog.getByRole('button', { name: 'Create token' }).click();
    await page.getByRole('heading', { name: 'Token “Everything” created' }).waitFor();
    const everything = await page.getByLabel('Token', { exact: true }).inputValue();
    const held = ((await (await api(everything, '/v1/token')).json()) as { scopes: string[] })
      .scopes;
    expect([...held].sort()).toEqual(everyScope);
  });

  // A developer's "everything": every scope but the three only an admin may hold (one width).
  if (width === 375)
    test('tokens: a developer’s “Everything your role allows” leaves out the admin-only scopes', async () => {
      const everyScope = await allScopes();
      const context = await loopbackContext(browser, refused, { width, height: 800 });
      try {
        const developer = await context.newPage();
        await developer.goto(portal('/tokens'));
        await developer.getByRole('button', { name: 'Sign in' }).click();
        await developer.getByLabel('Email').fill(`dana.developer-w${width}@layout-school.test`);
        await developer.getByLabel('Password').fill(PASSWORD);
        await developer.getByRole('button', { name: 'Sign in' }).click();
        await developer.getByRole('button', { name: 'New token' }).click();
        const form = developer.getByRole('dialog', { name: 'Create a token' });
        await form.getByLabel('Name').fill('Everything a developer may');
        await form.getByRole('radio', { name: 'Everything your role allows' }).check();
        await form.getByRole('button', { name: 'Create token' }).click();
        await developer
          .getByRole('heading', { name: 'Token “Everything a developer may” created' })
          .waitFor();
        const secret = await developer.getByLabel('Token', { exact: true }).inputValue();
        const given = ((await (await api(secret, '/v1/token')).json()) as { scopes: string[] })
          .scopes;
        const adminOnly = ['audit_log:read', 'members:write', 'organization:write'];
        expect(everyScope.filter((s) => adminOnly.includes(s))).toEqual(adminOnly);
        expect([...given].sort()).toEqual(everyScope.filter((s) => !adminOnly.includes(s)));
      } finally {
        await context.close();
      }
    });
});
