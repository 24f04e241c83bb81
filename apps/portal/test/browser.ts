import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import axe from 'axe-core';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
export const REPO_ROOT = path.resolve(__dirname, '..', '..', '..');

/** The suites serve the built portal: fail at once, saying how, when it has not been built. */
export function expectPortalBuilt(): void {
  const dist = path.join(REPO_ROOT, 'apps', 'portal', 'dist', 'index.html');
  if (!existsSync(dist))
    throw new Error(`${dist} is missing: build the portal first (pnpm build, or turbo run test)`);
}

/**
 * Debian's Chromium, loopback only: every host name other than 127.0.0.1 resolves to nothing,
 * and Google's background services (updates, safe browsing, metrics, sign-in) are off, so the
 * browser opens no connection beyond the test server and the webhook inspector.
 */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM))
    throw new Error(
      `${CHROMIUM} is missing: run scripts/browser-toolchain.sh (apt-get install -y chromium)`,
    );
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1',
      '--no-first-run',
      '--no-default-browser-check',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-default-apps',
      '--disable-domain-reliability',
      '--disable-sync',
      '--disable-client-side-phishing-detection',
      '--disable-features=OptimizationHints,MediaRouter,Translate,AutofillServerCommunication,CertificateTransparencyComponentUpdater,InterestFeedContentSuggestions',
      '--metrics-recording-only',
      '--no-pings',
      '--no-sandbox',
    ],
  });
}

/** A context that refuses (and records) any request to a host other than 127.0.0.1. */
export async function loopbackContext(
  browser: Browser,
  refused: string[],
  viewport = { width: 1280, height: 900 },
): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport });
  await context.route('**/*', async (route) => {
    const url = new URL(route.request().url());
    if (url.protocol === 'data:' || url.hostname === '127.0.0.1') return route.continue();
    refused.push(url.href);
    return route.abort('blockedbyclient');
  });
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  return context;
}

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: string[];
}

/**
 * axe-core on the page as it is (WCAG 2.1 A and AA rules plus best practices): the serious and
 * critical violations (see allViolations for the rest). Evaluated through the DevTools protocol, which the page's CSP does not
 * govern, so the CSP stays as strict as in production.
 */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  return (await allViolations(page)).filter(
    (v) => v.impact === 'serious' || v.impact === 'critical',
  );
}

/** axe-core on the page as it is (the same rules): every violation, whatever its impact. */
export async function allViolations(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(axe.source);
  const violations = await page.evaluate(async () => {
    const result = await (
      window as unknown as {
        axe: {
          run: (
            context: Document,
            options: object,
          ) => Promise<{
            violations: {
              id: string;
              impact: string | null;
              help: string;
              nodes: { target: unknown[] }[];
            }[];
          }>;
        };
      }
    ).axe.run(document, {
      runOnly: {
        type: 'tag',
        values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'],
      },
    });
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.map((n) => JSON.stringify(n.target)),
    }));
  });
  return violations;
}

/** With PORTAL_SCREENSHOTS=1, the page as docs/portal/<name>.png (for docs/portal.md); else nothing. */
export async function screenshot(page: Page, name: string): Promise<void> {
  if (process.env.PORTAL_SCREENSHOTS !== '1') return;
  const dir = path.join(REPO_ROOT, 'docs', 'portal');
  mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: path.join(dir, `${name}.png`), fullPage: true });
}
