import type { DynamicModule, INestApplication, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { Clock } from './common/clock';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { getStorageToken, type ThrottlerStorage } from '@nestjs/throttler';
import { getDataSourceToken } from '@nestjs/typeorm';
import express, { type NextFunction, type Request, type Response } from 'express';
import { Logger } from 'nestjs-pino';
import type { DestinationStream } from 'pino';
import helmet from 'helmet';
import { getAbsoluteFSPath } from 'swagger-ui-dist';
import type { DataSource } from 'typeorm';
import { AppModule } from './app.module';
import { BearerStrategy } from './auth/bearer.strategy';
import {
  apiPrefixAliasMiddleware,
  contentNegotiationMiddleware,
} from './common/content-negotiation';
import type { PlatformRequest } from './common/http-context';
import { jsonBodyParser, jsonParseErrorHandler } from './common/json-body';
import { createLogger } from './common/logger';
import { nulGuardMiddleware } from './common/nul-guard';
import { requestIdMiddleware } from './common/request-id';
import { requestLogMiddleware, requestMetricsMiddleware } from './common/request-log';
import { versionHeaderMiddleware } from './common/version';
import { Metrics } from './metrics/metrics';
import { AcceptInvitationPages } from './members/accept-pages';
import { ACCEPT_PATH } from './members/members.service';
import { InteractionPages } from './oauth/interactions';
import { OAuthClientsService } from './oauth/oauth-clients.service';
import { OAUTH_PATHS, OAuthProviderService } from './oauth/oauth-provider.service';
import { PORTAL_PATH } from './oauth/portal-client';
import { portalDevRouter, portalRouter } from './portal/portal-serving';
import { frontDoorMiddleware } from './rate-limit/front-door';
import type { AppConfig } from './config/env';

/** Request bodies above this size are refused with 413 before they are parsed. */
export const BODY_LIMIT = '1mb';

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
  } = {},
): Promise<NestExpressApplication> {
  const logger = createLogger(config, options.logDestination);
  const root = AppModule.forRoot(config, logger, options.modules, options.clock);
  const { app, http } =
    config.httpAdapter === 'fastify'
      ? await createOnFastify(root, config)
      : await createOnExpress(root);
  app.useLogger(app.get(Logger));
  app.enableShutdownHooks();
  http.disable('x-powered-by');
  // Hashing every body for a weak ETag cost ~3% of a list request; clients sync with updated_since.
  http.set('etag', false);
  // Flat query keys (`created_at[gte]` stays one key) and repeated keys become arrays, which
  // the contract refuses, so `?page=1&page=2` is a clear 400 rather than a silent pick.
  http.set('query parser', 'simple');
  http.set('trust proxy', config.trustProxy);

  http.use(versionHeaderMiddleware);
  http.use(securityHeaders);
  http.use(requestIdMiddleware);
  http.use(requestLogMiddleware(logger));
  http.use(requestMetricsMiddleware(app.get(Metrics)));
  http.use((req: Request, _res: Response, next: NextFunction) => {
    if (config.publicUrl) (req as PlatformRequest).publicOrigin = config.publicUrl;
    next();
  });
  // The portal's files are static and public: served before the front door, so loading the
  // app does not spend the anonymous per-IP budget its sign-in and API calls then use.
  if (config.portal.dev) {
    const dev = await portalDevRouter(app.getHttpServer());
    app.getHttpServer().on('close', () => void dev.close());
    http.use(PORTAL_PATH, dev.router);
  } else {
    http.use(PORTAL_PATH, portalRouter(config));
  }
  // Anonymous requests are charged to their IP (and refused when over budget) before any body
  // is read and before the authorization server sees them.
  http.use(
    frontDoorMiddleware({
      config,
      storage: app.get<ThrottlerStorage>(getStorageToken()),
      metrics: app.get(Metrics),
      bearer: app.get(BearerStrategy),
      oauthClients: app.get(OAuthClientsService),
    }),
  );
  // The authorization server and its pages parse their own (form) bodies, before the JSON parser.
  http.use(app.get(OAuthProviderService).middleware());
  http.use(OAUTH_PATHS.interaction, app.get(InteractionPages).router());
  http.use(ACCEPT_PATH, app.get(AcceptInvitationPages).router());
  http.use(apiPrefixAliasMiddleware);
  http.use('/v1', contentNegotiationMiddleware);
  http.use(jsonBodyParser(BODY_LIMIT));
  http.use(jsonParseErrorHandler);
  http.use(nulGuardMiddleware);
  http.use('/docs/assets/', express.static(getAbsoluteFSPath(), { index: false }));

  await app.init();
  await assertMigrated(app, config);
  return app;
}

/** Express: Nest's own adapter; the middleware goes on the app itself. */
async function createOnExpress(
  root: DynamicModule,
): Promise<{ app: NestExpressApplication; http: express.Express }> {
  const app = await NestFactory.create<NestExpressApplication>(root, {
    bufferLogs: true,
    bodyParser: false,
  });
  return { app, http: app.getHttpAdapter().getInstance() as express.Express };
}

/**
 * Fastify (HTTP_ADAPTER=fastify, an experiment for issue 17): Fastify routes to the controllers
 * and sends their answers; the middleware, written for Express, runs on an Express app that
 * never listens, mounted as one middleware (through @fastify/middie), so the request and
 * response the middleware see are Express's as before.
 */
async function createOnFastify(
  root: DynamicModule,
  config: AppConfig,
): Promise<{ app: NestExpressApplication; http: express.Express }> {
  // Loaded only when chosen: the Express deployment never evaluates Fastify.
  const { FastifyAdapter } = await import('@nestjs/platform-fastify');
  const adapter = new FastifyAdapter({
    trustProxy: config.trustProxy,
    bodyLimit: 1024 * 1024,
    // Express matches paths case-insensitively and with or without a trailing slash.
    routerOptions: { ignoreTrailingSlash: true, caseSensitive: false },
  });
  const app = await NestFactory.create(root, adapter, { bufferLogs: true, bodyParser: false });
  const fastify = adapter.getInstance();
  // The Express JSON parser in the middleware chain has read the body already.
  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser('*', (request, _payload, done) => {
    done(null, (request.raw as { body?: unknown }).body);
  });
  // The route pattern for the request log and metrics, which Express's router gave them.
  fastify.addHook('onRequest', (request, _reply, done) => {
    const pattern = request.routeOptions.url;
    if (pattern) (request.raw as unknown as PlatformRequest).routePattern = pattern;
    done();
  });
  const http = express();
  app.use(http);
  return { app: app as unknown as NestExpressApplication, http };
}

/**
 * Security headers on every response (helmet): no MIME sniffing, no framing anywhere, no
 * referrer, and a Content-Security-Policy that lets the one HTML page (/docs, Swagger UI) load
 * only its own scripts and styles. No CORS headers are sent: the API is for servers, and a
 * browser app should call it through its own back end rather than hold a token.
 */
const securityHeaders = helmet({
  contentSecurityPolicy: {
    useDefaults: false,
    directives: {
      defaultSrc: ["'none'"],
      scriptSrc: ["'self'"],
      // Swagger UI sets style attributes on its elements.
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
