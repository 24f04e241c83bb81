/** Checks and fixtures of the product journeys (product.e2e-spec.ts). */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTestServer, type TestServer } from '@platform/server/testing';
import type { Page } from 'playwright-core';
import { allViolations } from './browser';

export async function expectAccessible(page: Page, name: string): Promise<void> {
  expect({ page: name, violations: await allViolations(page) }).toEqual({
    page: name,
    violations: [],
  });
}

export async function portalToken(page: Page): Promise<string> {
  const raw = await page.evaluate(() => sessionStorage.getItem('platform.portal.session'));
  return (JSON.parse(raw!) as { accessToken: string }).accessToken;
}

/** `fetch` against the test server with a bearer token and a JSON body type. */
export function apiCaller(
  server: TestServer,
): (token: string, pathname: string, init?: RequestInit) => Promise<Response> {
  return (token, pathname, init = {}) =>
    fetch(`${server.url}${pathname}`, {
      ...init,
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    });
}

/**
 * Runs `during` while `spend` is called over and over (a burst of requests that keeps the rate
 * limit's window full): on a loaded machine the requests of an earlier burst slide out of the
 * window before the page gets to ask.
 */
export async function whileSpending<T>(
  spend: () => Promise<unknown>,
  during: () => Promise<T>,
): Promise<T> {
  let spending = true;
  const loop = (async () => {
    while (spending) await spend();
  })();
  try {
    return await during();
  } finally {
    spending = false;
    await loop;
  }
}

/** Nothing on the page reaches past the viewport's right edge, and the page does not scroll sideways. */
export async function expectNoSidewaysScroll(page: Page, what: string): Promise<void> {
  const found = await page.evaluate(() => {
    const width = document.documentElement.clientWidth;
    return {
      overflow: document.documentElement.scrollWidth - width,
      tooWide: [...document.querySelectorAll('main *')]
        .filter((el) => el.getBoundingClientRect().right > width + 1)
        .filter((el) => !el.closest('.table-wrap') || el.closest('table.stacking'))
        .map((el) => `${el.tagName.toLowerCase()}.${el.className}`)
        .slice(0, 5),
    };
  });
  expect({ what, ...found }).toEqual({ what, overflow: 0, tooWide: [] });
}

/**
 * At the page's width, every action in the page's content (buttons, links, menus, fields and
 * disclosure summaries that are rendered) lies inside the viewport from left to right, no region
 * (a table's) scrolls sideways, and the document does not either: on a phone, each row's
 * Revoke, Remove, Download… is reachable without scrolling sideways. `regionsMayScroll` lets a
 * region scroll as long as every action stays on screen (a wide screen's tables). Returns how many
 * actions it checked, so a caller can make sure the page had some.
 */
export async function expectActionsOnScreen(
  page: Page,
  what: string,
  { regionsMayScroll = false }: { regionsMayScroll?: boolean } = {},
): Promise<number> {
  const found = await page.evaluate(() => {
    const width = document.documentElement.clientWidth;
    const describe = (el: Element) =>
      `${el.tagName.toLowerCase()} “${(el.getAttribute('aria-label') ?? el.textContent ?? '').trim().slice(0, 60)}”`;
    const actions = [
      ...document.querySelectorAll('main :is(button, a[href], select, input, textarea, summary)'),
    ].filter((el) => el.checkVisibility() && (el as HTMLInputElement).type !== 'hidden');
    return {
      actions: actions.length,
      overflow: document.documentElement.scrollWidth - width,
      offScreen: actions
        .filter((el) => {
          const box = el.getBoundingClientRect();
          return box.left < 0 || box.right > width + 0.5;
        })
        .map(describe)
        .slice(0, 5),
      scrollingSideways: [...document.querySelectorAll('main *')]
        .filter((el) => {
          const overflowX = getComputedStyle(el).overflowX;
          return (
            (overflowX === 'auto' || overflowX === 'scroll') &&
            el.tagName !== 'PRE' &&
            el.scrollWidth > el.clientWidth + 1
          );
        })
        .map((el) => el.getAttribute('aria-label') ?? `${el.tagName.toLowerCase()}.${el.className}`)
        .slice(0, 5),
    };
  });
  const { actions, ...layout } = found;
  if (regionsMayScroll) layout.scrollingSideways = [];
  expect({ what, ...layout }).toEqual({ what, overflow: 0, offScreen: [], scrollingSideways: [] });
  return actions;
}

/**
 * No word in the page's content is broken across lines: each run of letters and digits up to
 * `longest` characters long (longer ones, such as ids, may break at the line's end) sits on one
 * line. Catches `overflow-wrap: anywhere` and `word-break: break-all` squeezing a column.
 */
export async function expectNoBrokenWords(page: Page, what: string, longest = 20): Promise<void> {
  const broken = await page.evaluate((max) => {
    const found: string[] = [];
    const walker = document.createTreeWalker(
      document.querySelector('main') ?? document.body,
      NodeFilter.SHOW_TEXT,
    );
    const range = document.createRange();
    for (let node = walker.nextNode(); node && found.length < 5; node = walker.nextNode()) {
      const parent = node.parentElement;
      if (!parent?.checkVisibility() || parent.closest('.visually-hidden, pre, textarea')) continue;
      // Clipped to a pixel for assistive technology only (a card's hidden column headers).
      let clipped = false;
      for (let el: Element | null = parent; el && !clipped; el = el.parentElement)
        clipped = el.getBoundingClientRect().width <= 1;
      if (clipped) continue;
      for (const match of (node.textContent ?? '').matchAll(/[\p{L}\p{N}]+/gu)) {
        if (match[0].length < 2 || match[0].length > max) continue;
        range.setStart(node, match.index);
        range.setEnd(node, match.index + match[0].length);
        const lines = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));
        if (lines.size > 1) found.push(match[0]);
      }
    }
    return found;
  }, longest);
  expect({ what, broken }).toEqual({ what, broken: [] });
}

/** Follows a link of the portal's navigation, through the Menu button on a narrow screen. */
export async function followNav(page: Page, label: string): Promise<void> {
  const menu = page.getByRole('button', { name: 'Menu' });
  if (await menu.isVisible()) await menu.click();
  await page.getByRole('navigation', { name: 'Portal' }).getByRole('link', { name: label }).click();
}

export async function waitFor(check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${check.toString()}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** A webhook receiver on loopback: 204 for every delivery, or 500 while `fails()` says so. */
export async function startReceiver(
  fails: () => boolean,
): Promise<{ receiver: Server; url: string }> {
  const receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.statusCode = fails() ? 500 : 204;
      res.end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  return { receiver, url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks` };
}

/**
 * The server of the journeys (SQLite, or PostgreSQL and Redis when the environment names them),
 * with private webhook URLs allowed and fast delivery and retry.
 */
export function startProductServer(): Promise<TestServer> {
  return startTestServer({
    postgresAdminUrl: process.env.TEST_DATABASE_URL || undefined,
    redisUrl: process.env.TEST_REDIS_URL || undefined,
    env: {
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      WEBHOOK_POLL_INTERVAL: '100ms',
      WEBHOOK_RETRY_SCHEDULE: '1s',
    },
  });
}
