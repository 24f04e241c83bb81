import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Server } from 'node:http';
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import type { PlatformRequest } from '../common/http-context';
import type { AppConfig } from '../config/env';
import { escapeHtml, page } from '../oauth/pages';
import { PORTAL_PATH } from '../oauth/portal-client';
import { decodedPath, sendPrecompressed } from './precompressed';

/**
 * The portal's pages: only its own scripts and styles, API calls to this origin, and no
 * framing. Its sign-in goes through /oauth on this origin too, so nothing else is allowed.
 */
const PORTAL_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

/**
 * `pnpm dev` only: Vite injects an inline preamble (React Fast Refresh) and its client opens a
 * WebSocket to this origin for hot updates, so its pages need inline scripts; never in production.
 */
const PORTAL_DEV_CSP = PORTAL_CSP.replace("script-src 'self'", "script-src 'self' 'unsafe-inline'")
  .replace("style-src 'self'", "style-src 'self' 'unsafe-inline'")
  .replace("connect-src 'self'", "connect-src 'self' ws: wss:");

/** Logs and metrics name every portal request by one pattern, not its (unbounded) path. */
const PORTAL_ROUTE_PATTERN = `${PORTAL_PATH}/*`;

/** A year: Vite names every asset after its content hash, so a changed file is a new URL. */
const IMMUTABLE = 'public, max-age=31536000, immutable';

/**
 * Serves the built portal (apps/portal/dist) under /portal: hashed assets cached for a year,
 * every other path the single page (index.html, revalidated each time) so the app's own routes
 * load on reload or from a bookmark. Each file goes out as the build precompressed it (brotli or
 * gzip beside it, by Accept-Encoding: precompressed.ts), else as it is. Without a build it
 * answers 503 saying how to make one.
 */
export function portalRouter(config: AppConfig): Router {
  const router = express.Router({ strict: true });
  const dist = config.portal.distDir;
  router.use((req: Request, res: Response, next: NextFunction) => {
    (req as PlatformRequest).routePattern = PORTAL_ROUTE_PATTERN;
    res.setHeader('Content-Security-Policy', PORTAL_CSP);
    next();
  });
  // An asset that is not there (an old build's name) is a plain 404, never the page.
  const assetNotFound = (res: Response) =>
    res.status(404).setHeader('Cache-Control', 'no-store').type('text').send('Not found');
  router.use('/assets', (req: Request, res: Response, next: NextFunction) => {
    const file = decodedPath(req);
    if (!isRead(req) || file === undefined) return assetNotFound(res);
    sendPrecompressed(req, res, next, {
      root: path.join(dist, 'assets'),
      file: `.${file}`,
      cacheControl: IMMUTABLE,
      notFound: () => assetNotFound(res),
    }).catch(next);
  });
  // Files at the root (favicon) are not hashed: cached briefly, revalidated after.
  router.use((req: Request, res: Response, next: NextFunction) => {
    const file = decodedPath(req);
    if (!isRead(req) || file === undefined || file === '/' || file === '/index.html') return next();
    sendPrecompressed(req, res, next, {
      root: dist,
      file: `.${file}`,
      cacheControl: 'public, max-age=300',
      notFound: () => next(),
    }).catch(next);
  });
  router.get(/.*/, (req: Request, res: Response, next: NextFunction) => {
    if (!existsSync(path.join(dist, 'index.html'))) return notBuilt(res, dist);
    sendPrecompressed(req, res, next, {
      root: dist,
      file: 'index.html',
      cacheControl: 'no-cache',
      notFound: () => notBuilt(res, dist),
    }).catch(next);
  });
  return router;
}

function isRead(req: Request): boolean {
  return req.method === 'GET' || req.method === 'HEAD';
}

function notBuilt(res: Response, dist: string): void {
  res
    .status(503)
    .setHeader('Cache-Control', 'no-store')
    .setHeader('Retry-After', '60')
    // The plain page's own <style> (the shared look of the server's HTML pages).
    .setHeader(
      'Content-Security-Policy',
      PORTAL_CSP.replace("style-src 'self'", "style-src 'unsafe-inline'"),
    )
    .type('html')
    .send(
      page(
        'Portal not built',
        `<h1>The portal is not built</h1>
        <p>This server serves the developer portal from <code>${escapeHtml(dist)}</code>, which has no
        <code>index.html</code>. Build it with <code>pnpm --filter @platform/portal build</code>
        (or <code>pnpm build</code>), or run <code>pnpm dev</code> for the portal with hot reload.</p>`,
      ),
    );
}

interface ViteDevServer {
  middlewares: (req: Request, res: Response, next: NextFunction) => void;
  transformIndexHtml(url: string, html: string): Promise<string>;
  close(): Promise<void>;
}

/**
 * `pnpm dev`: Vite in middleware mode inside this server, so the portal, the API and the OAuth
 * pages share one origin exactly as in production (the sign-in redirect URI is this origin's
 * /portal/callback), and hot updates ride a WebSocket on the same HTTP server. Vite is the
 * portal's dev dependency, loaded from there (require of an ES module, Node 22.12+).
 */
export async function portalDevRouter(
  httpServer: Server,
  portalRoot = path.resolve(__dirname, '..', '..', '..', 'portal'),
): Promise<{ router: Router; close: () => Promise<void> }> {
  const requireFromPortal = createRequire(path.join(portalRoot, 'package.json'));
  const vite = requireFromPortal('vite') as {
    createServer(options: Record<string, unknown>): Promise<ViteDevServer>;
  };
  const server = await vite.createServer({
    root: portalRoot,
    configFile: path.join(portalRoot, 'vite.config.mts'),
    appType: 'custom',
    server: { middlewareMode: true, hmr: { server: httpServer } },
  });
  const { readFile } = await import('node:fs/promises');
  const router = express.Router();
  router.use((req: Request, res: Response, next: NextFunction) => {
    (req as PlatformRequest).routePattern = PORTAL_ROUTE_PATTERN;
    res.setHeader('Content-Security-Policy', PORTAL_DEV_CSP);
    res.setHeader('Cache-Control', 'no-store');
    next();
  });
  router.use((req: Request, res: Response, next: NextFunction) => {
    // Mounted at /portal, Vite wants the full URL (its base is /portal/).
    const stripped = req.url;
    req.url = `${PORTAL_PATH}${stripped}`;
    server.middlewares(req, res, () => {
      req.url = stripped;
      next();
    });
  });
  router.get(/.*/, (req: Request, res: Response, next: NextFunction) => {
    readFile(path.join(portalRoot, 'index.html'), 'utf8')
      .then((html) => server.transformIndexHtml(`${PORTAL_PATH}${req.url}`, html))
      .then((html) => res.type('html').send(html))
      .catch(next);
  });
  return { router, close: () => server.close() };
}
