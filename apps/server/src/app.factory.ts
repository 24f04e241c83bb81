import type { DynamicModule, INestApplication, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { Clock } from './common/clock';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { getStorageToken } from '@nestjs/throttler';
import { getDataSourceToken } from '@nestjs/typeorm';
import type { NextFunction, Request, Response } from 'express';
import { Logger } from 'nestjs-pino';
import type { DestinationStream } from 'pino';
import helmet from 'helmet';
import path from 'node:path';
import type { DataSource } from 'typeorm';
import { AppModule } from './app.module';
import { BearerStrategy } from './auth/bearer.strategy';
import {
  apiPrefixAliasMiddleware,
  contentNegotiationMiddleware,
} from './common/content-negotiation';
import type { PlatformRequest } from './common/http-context';
import { jsonBodyParser, jsonParseErrorHandler } from './common/json-body';
import { JsonReplyAdapter } from './common/json-reply';
import { createLogger } from './common/logger';
import { nulGuardMiddleware } from './common/nul-guard';
import { requestIdMiddleware } from './common/request-id';
import { requestLogMiddleware, requestMetricsMiddleware } from './common/request-log';
import { RequestLogWriter } from './request-logs/request-log-writer';
import { versionHeaderMiddleware } from './common/version';
import { ChangeFeedService } from './events/change-feed.service';
import { Draining } from './health/draining';
import { Metrics } from './metrics/metrics';
import { AcceptInvitationPages } from './members/accept-pages';
import { EmailChangePages } from './members/email-change-pages';
import { EMAIL_CHANGE_PATH } from './members/email-changes.service';
import { PasswordResetPages } from './members/password-reset-pages';
import { PASSWORD_RESET_PATH } from './members/password-resets.service';
import { ACCEPT_PATH } from './members/invitations.service';
import { InteractionPages } from './oauth/interactions';
import { OAuthClientsService } from './oauth/oauth-clients.service';
import { OAUTH_PATHS, OAuthProviderService } from './oauth/oauth-provider.service';
import { PORTAL_PATH } from './oauth/portal-client';
import { portalDevRouter, portalRouter } from './portal/portal-serving';
import { frontDoorMiddleware } from './rate-limit/front-door';
import type { SlidingWindowStorage } from './rate-limit/sliding-window.store';
import type { AppConfig } from './config/env';

/** Request bodies above this size are refused with 413 before they are parsed. */
export const BODY_LIMIT = '1mb';

/**
 * Redoc's standalone bundle (the /docs reference UI), served under /docs/assets/. Found from its
 * package.json: requiring the package would evaluate the browser bundle on every server start.
 */
const REDOC_ASSETS = path.join(path.dirname(require.resolve('redoc/package.json')), 'bundles');

/**
 * Builds the fully configured application (middleware order, filters, migrations) without
 * listening. `main.ts`, the tests and the benchmark all start the server through here.
 */
export async function createApp(
  config: AppConfig,
  options: {
    logDestination?: DestinationStream;
    /** Extra modules (tests: a controller on a test contract, behind every guard and interceptor). */
    modules?: readonly (Type | DynamicModule)[];
    /** The clock every service reads (tests: one they move); the system clock by default. */
    clock?: Clock;
    /**
     * A module that fails to initialise ends the process (Nest's default, for `main.ts`), or,
     * when false, rejects: a test server's caller then fails instead of its whole Jest worker.
     */
    abortOnError?: boolean;
  } = {},
): Promise<NestExpressApplication> {
  const logger = createLogger(config, options.logDestination);
  const root = AppModule.forRoot(config, logger, options.modules, options.clock);
  const app = await NestFactory.create<NestExpressApplication>(root, new JsonReplyAdapter(), {
    bufferLogs: true,
    bodyParser: false,
    abortOnError: options.abortOnError ?? true,
  });
  app.useLogger(app.get(Logger));
  configureHttp(app, config);
  useRequestMiddleware(app, config, logger);
  await usePortal(app, config);
  useFrontDoorAndParsers(app, config);

  await app.init();
  await assertMigrated(app, config);
  return app;
}

/** Express settings and the HTTP server's timeouts. */
function configureHttp(app: NestExpressApplication, config: AppConfig): void {
  app.disable('x-powered-by');
  const http = app.getHttpServer();
  http.keepAliveTimeout = config.http.keepAliveTimeoutMs;
  http.headersTimeout = config.http.headersTimeoutMs;
  // Hashing every body for a weak ETag cost ~3% of a list request; clients sync with updated_since.
  app.set('etag', false);
  // Flat query keys (`created_at[gte]` stays one key) and repeated keys become arrays, which
  // the contract refuses, so `?page=1&page=2` is a clear 400 rather than a silent pick.
  app.set('query parser', 'simple');
  app.set('trust proxy', config.trustProxy);
}

/** What every request passes first: draining, headers, its id, its logs and metrics. */
function useRequestMiddleware(
  app: NestExpressApplication,
  config: AppConfig,
  logger: ReturnType<typeof createLogger>,
): void {
  const draining = app.get(Draining);
  // A change feed read waiting for a change answers at once rather than hold the shutdown.
  const feed = app.get(ChangeFeedService);
  draining.onDrain(() => feed.stopWaiting());
  app.use((_req: Request, res: Response, next: NextFunction) => {
    // Shutting down (shutdown.ts): the client opens its next request elsewhere.
    if (draining.active) res.setHeader('Connection', 'close');
    next();
  });
  app.use(versionHeaderMiddleware);
  app.use(securityHeaders);
  app.use(requestIdMiddleware);
  app.use(requestLogMiddleware(logger));
  app.use(requestMetricsMiddleware(app.get(Metrics)));
  const requestLog = app.get(RequestLogWriter);
  if (requestLog.enabled) app.use(requestLog.middleware());
  app.use((req: Request, _res: Response, next: NextFunction) => {
    if (config.publicUrl) (req as PlatformRequest).publicOrigin = config.publicUrl;
    next();
  });
}

/**
 * The portal's files are static and public: served before the front door, so loading the app
 * does not spend the anonymous per-IP budget its sign-in and API calls then use.
 */
async function usePortal(app: NestExpressApplication, config: AppConfig): Promise<void> {
  if (config.portal.dev) {
    const dev = await portalDevRouter(app.getHttpServer());
    app.getHttpServer().on('close', () => void dev.close());
    app.use(PORTAL_PATH, dev.router);
  } else {
    app.use(PORTAL_PATH, portalRouter(config));
  }
}

/** The front door's budget, the authorization server and its pages, then the API's parsers. */
function useFrontDoorAndParsers(app: NestExpressApplication, config: AppConfig): void {
  // Anonymous requests are charged to their IP (and refused when over budget) before any body
  // is read and before the authorization server sees them.
  app.use(
    frontDoorMiddleware({
      config,
      storage: app.get<SlidingWindowStorage>(getStorageToken()),
      metrics: app.get(Metrics),
      bearer: app.get(BearerStrategy),
      oauthClients: app.get(OAuthClientsService),
    }),
  );
  // The authorization server and its pages parse their own (form) bodies, before the JSON parser.
  app.use(app.get(OAuthProviderService).middleware());
  app.use(OAUTH_PATHS.interaction, app.get(InteractionPages).router());
  app.use(ACCEPT_PATH, app.get(AcceptInvitationPages).router());
  app.use(PASSWORD_RESET_PATH, app.get(PasswordResetPages).router());
  app.use(EMAIL_CHANGE_PATH, app.get(EmailChangePages).router());
  app.use(apiPrefixAliasMiddleware);
  app.use('/v1', contentNegotiationMiddleware);
  app.use(jsonBodyParser(BODY_LIMIT));
  app.use(jsonParseErrorHandler);
  app.use(nulGuardMiddleware);
  app.useStaticAssets(REDOC_ASSETS, { prefix: '/docs/assets/', index: false });
}

/**
 * Security headers on every response (helmet): no MIME sniffing, no framing anywhere, no
 * referrer, and a Content-Security-Policy that lets the one HTML page (/docs, Redoc) load
 * only its own scripts and styles. No CORS headers are sent: the API is for servers, and a
 * browser app should call it through its own back end rather than hold a token.
 */
const securityHeaders = helmet({
  contentSecurityPolicy: {
    useDefaults: false,
    directives: {
      defaultSrc: ["'none'"],
      scriptSrc: ["'self'"],
      // Redoc builds its search index in a worker it starts from a blob of its own script.
      workerSrc: ["'self'", 'blob:'],
      // Redoc (styled-components) writes its styles into <style> elements and attributes.
      styleSrc: ["'self'", "'unsafe-inline'"],
      imgSrc: ["'self'", 'data:'],
      connectSrc: ["'self'"],
      frameAncestors: ["'none'"],
      baseUri: ["'none'"],
      formAction: ["'none'"],
    },
  },
  frameguard: { action: 'deny' },
  referrerPolicy: { policy: 'no-referrer' },
});

async function assertMigrated(app: INestApplication, config: AppConfig): Promise<void> {
  const dataSource = app.get<DataSource>(getDataSourceToken());
  if (await dataSource.showMigrations()) {
    await app.close();
    throw new Error(
      `The ${config.database.type} database has pending migrations. Run \`pnpm platform migrate\` first` +
        (config.database.type === 'sqlite' ? ` (or unset DATABASE_MIGRATE_ON_START).` : '.'),
    );
  }
}
