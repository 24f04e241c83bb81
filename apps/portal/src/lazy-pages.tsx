import { lazy, Suspense, type ComponentType, type ReactNode } from 'react';

/**
 * Each page is its own chunk, fetched the first time it is shown (issue 48: the first page
 * loads only the shell and the tokens page; chart.js comes only with Usage). The imports are
 * kept here, by route, so main.tsx can start the current page's chunk alongside the shell.
 */
const loaders = {
  '/tokens': () => import('./pages/tokens-page'),
  '/webhooks': () => import('./pages/webhooks-page'),
  '/webhooks/': () => import('./pages/webhook-endpoint-page'),
  '/oauth-apps': () => import('./pages/oauth-apps-page'),
  '/members': () => import('./pages/members-page'),
  '/exports': () => import('./pages/exports-page'),
  '/imports': () => import('./pages/imports-page'),
  '/audit-log': () => import('./pages/audit-log-page'),
  '/request-logs': () => import('./pages/request-logs-page'),
  '/usage': () => import('./pages/usage-page'),
  '/organization': () => import('./pages/organization-page'),
  '/sandboxes': () => import('./pages/sandboxes-page'),
  '/account': () => import('./pages/account-page'),
} as const;

type Route = keyof typeof loaders;

/** A page component, loaded on first render; its chunk is fetched once. */
function page<P extends object>(load: () => Promise<ComponentType<P>>) {
  return lazy(async () => ({ default: await load() }));
}

export const TokensPage = page(() => loaders['/tokens']().then((m) => m.TokensPage));
export const WebhooksPage = page(() => loaders['/webhooks']().then((m) => m.WebhooksPage));
export const WebhookEndpointPage = page(() =>
  loaders['/webhooks/']().then((m) => m.WebhookEndpointPage),
);
export const OAuthAppsPage = page(() => loaders['/oauth-apps']().then((m) => m.OAuthAppsPage));
export const MembersPage = page(() => loaders['/members']().then((m) => m.MembersPage));
export const ExportsPage = page(() => loaders['/exports']().then((m) => m.ExportsPage));
export const ImportsPage = page(() => loaders['/imports']().then((m) => m.ImportsPage));
export const AuditLogPage = page(() => loaders['/audit-log']().then((m) => m.AuditLogPage));
export const RequestLogsPage = page(() =>
  loaders['/request-logs']().then((m) => m.RequestLogsPage),
);
export const UsagePage = page(() => loaders['/usage']().then((m) => m.UsagePage));
export const OrganizationPage = page(() =>
  loaders['/organization']().then((m) => m.OrganizationPage),
);
export const AccountPage = page(() => loaders['/account']().then((m) => m.AccountPage));
export const SandboxesPage = page(() => loaders['/sandboxes']().then((m) => m.SandboxesPage));

/**
 * Starts fetching the chunk of the page at `path` (relative to /portal; `/` is the tokens
 * page), so it arrives while the shell asks the API who is signed in, not after. The browser
 * keeps the module: the page's later lazy() import resolves from it.
 */
export function preloadPage(path: string): void {
  const route = path === '/' ? '/tokens' : path;
  const key = (Object.keys(loaders) as Route[]).find(
    (r) => route === r || (r.endsWith('/') && route.startsWith(r) && route.length > r.length),
  );
  if (key) void loaders[key]().catch(() => undefined);
}

/** While a page's chunk is on its way: a polite status, announced to screen readers. */
export function PageSuspense({ children }: { children: ReactNode }) {
  return (
    <Suspense
      fallback={
        <p role="status" aria-live="polite" className="page-loading">
          Loading…
        </p>
      }
    >
      {children}
    </Suspense>
  );
}
