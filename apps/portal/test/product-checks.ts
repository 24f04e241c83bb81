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
