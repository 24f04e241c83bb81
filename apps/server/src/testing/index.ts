/**
 * Starts a real server on loopback for tests and benchmarks (the SDK's tests, the e2e suite,
 * `pnpm bench`): a fresh SQLite file, or a fresh database on the PostgreSQL server at
 * `postgresAdminUrl`, migrated, with helpers to create organizations, tokens and students.
 * Several servers may run in one process: each app has its own bearer strategy (no passport
 * registry), so each authenticates against its own database.
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import type { DynamicModule, Type } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { getDataSourceToken } from '@nestjs/typeorm';
import type { OAuthClientResource, Role, Scope } from '@platform/contract';
import type { DestinationStream } from 'pino';
import type { DataSource } from 'typeorm';
import { createApp } from '../app.factory';
import type { Clock } from '../common/clock';
import { TokensService } from '../auth/tokens.service';
import { type AppConfig, loadConfig } from '../config/env';
import { type OAuthClientInput, OAuthClientsService } from '../oauth/oauth-clients.service';
import { UsersService } from '../oauth/users.service';
import { prepareDatabase } from './test-database';
import type { Organization } from '../organizations/organization.entity';
import {
  type CreateOrganizationInput,
  OrganizationsService,
} from '../organizations/organizations.service';
import { demoStudents } from '../seed/demo-students';
import { OPERATOR } from '../audit/audit-actor';
import type { Student } from '../students/student.entity';
import { StudentsService } from '../students/students.service';

export interface TestServerOptions {
  /**
   * The Jest run this server belongs to: its database is then a copy of a template migrated once
   * per run (see test-database.ts). Without one, the database is migrated on its own.
   */
  templateRun?: string;
  /** A PostgreSQL URL whose user may CREATE DATABASE; a fresh database is made per server. */
  postgresAdminUrl?: string;
  /**
   * A Redis URL: the server then runs as in the scale-out deployment (shared rate limit, BullMQ
   * delivery), under a fresh key prefix so servers sharing the Redis never see each other's keys.
   */
  redisUrl?: string;
  /** Extra environment, as the server would read it (e.g. RATE_LIMIT_ANONYMOUS). */
  env?: Record<string, string>;
  /** Where log lines go (default stdout; LOG_LEVEL is `silent` unless `env` says otherwise). */
  logDestination?: DestinationStream;
  /** Extra Nest modules, e.g. a controller implementing a test contract. */
  modules?: readonly (Type | DynamicModule)[];
  /** The server's clock (e.g. a `ManualClock` the test moves); the system clock by default. */
  clock?: Clock;
  /**
   * Another server's database (its `databaseUrl`), shared rather than copied: two instances on
   * one database, as in the scale-out deployment. Left in place on close (its owner drops it).
   */
  databaseUrl?: string;
}

export interface TestServer {
  url: string;
  /** The server's database, as DATABASE_URL names it (for the CLI, or a second server). */
  databaseUrl: string;
  config: AppConfig;
  app: NestExpressApplication;
  dataSource: DataSource;
  createOrganization(input?: Partial<CreateOrganizationInput>): Promise<Organization>;
  createToken(
    organizationId: string,
    scopes: readonly (Scope | 'all')[],
    options?: { expiresAt?: Date; name?: string; userId?: string },
  ): Promise<{ token: string; id: string }>;
  revokeToken(id: string): Promise<void>;
  /**
   * An organization member who can sign in on the login page. An address that already has an
   * account becomes a member of this organization too (its password unchanged; `password` is
   * then ignored), as an accepted invitation does.
   */
  createUser(
    organizationId: string,
    email: string,
    password: string,
    options?: { role?: Role },
  ): Promise<{ id: string }>;
  /** Registers an OAuth client; `client_secret` is set for confidential clients. */
  createOAuthClient(
    organizationId: string,
    input: Partial<OAuthClientInput> & Pick<OAuthClientInput, 'type'>,
  ): Promise<OAuthClientResource & { client_secret: string | null }>;
  /** Inserts `count` generated students (or the given rows) and returns them. */
  insertStudents(
    organizationId: string,
    countOrRows: number | Student[],
    now?: number,
  ): Promise<Student[]>;
  /**
   * Stops the app as a crash or a deploy would (listener closed, open connections cut) and keeps
   * the database, so `start()` brings the same server back: same port, database and secrets key.
   */
  stop(): Promise<void>;
  /** Starts the stopped app again; `app`, `dataSource` and the helpers then point at the new one. */
  start(): Promise<void>;
  close(): Promise<void>;
}

/** A free loopback port, so the OAuth issuer (which names the port) is known before boot. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const database = options.databaseUrl
    ? { databaseUrl: options.databaseUrl, drop: () => Promise.resolve() }
    : await prepareDatabase(options);
  let port = await freePort();
  let config = testServerConfig(options, port, database.databaseUrl);
  const boot = async () => {
    const app = await createApp(config, {
      abortOnError: false,
      ...(options.logDestination && { logDestination: options.logDestination }),
      ...(options.modules && { modules: options.modules }),
      ...(options.clock && { clock: options.clock }),
    });
    await app.listen(port, '127.0.0.1').catch(async (error: unknown) => {
      await app.close();
      throw error;
    });
    return app;
  };
  // The port was free when picked, but another process (an outgoing connection's ephemeral
  // port) may take it before the app binds it: then the app boots again on another.
  const first = await boot()
    .catch(async (error: unknown) => {
      if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
      port = await freePort();
      config = testServerConfig(options, port, database.databaseUrl);
      return boot();
    })
    .catch(async (error: unknown) => {
      await database.drop();
      throw error;
    });
  let running: NestExpressApplication | undefined = first;
  const stopApp = async () => {
    const app = running;
    running = undefined;
    // A test is done with its connections: none waits out the keep-alive or headers timeout
    // (65 s) that a server behind a load balancer gives them.
    app?.getHttpServer().closeAllConnections();
    await app?.close();
  };
  const server: TestServer = {
    url: `http://127.0.0.1:${port}`,
    databaseUrl: database.databaseUrl,
    config,
    ...appParts(first),
    stop: stopApp,
    start: async () => {
      if (running) return;
      running = await boot();
      Object.assign(server, appParts(running));
    },
    close: async () => {
      await stopApp();
      await database.drop();
    },
  };
  return server;
}

/** The parts of a TestServer that belong to one running app. */
function appParts(app: NestExpressApplication) {
  return {
    app,
    dataSource: app.get<DataSource>(getDataSourceToken()),
    ...testHelpers(app),
  };
}

/** A test server's configuration: silent, on `port` and the test database, then `options.env`. */
function testServerConfig(options: TestServerOptions, port: number, databaseUrl: string) {
  return loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    PORT: String(port),
    DATABASE_URL: databaseUrl,
    // A fresh key per server, as each test database is fresh (PostgreSQL requires one).
    WEBHOOK_SECRETS_KEY: randomBytes(32).toString('base64'),
    // Suites share a loaded CI machine; a search that is slow there is not what they test. The
    // budget's own tests set SEARCH_TIMEOUT themselves.
    SEARCH_TIMEOUT: '10s',
    ...(options.redisUrl && {
      REDIS_URL: options.redisUrl,
      REDIS_PREFIX: `platform-test-${randomBytes(6).toString('hex')}`,
    }),
    ...options.env,
  });
}

/** The TestServer's helpers that write through the app's own services, as an operator. */
function testHelpers(
  app: NestExpressApplication,
): Omit<
  TestServer,
  'url' | 'databaseUrl' | 'config' | 'app' | 'dataSource' | 'stop' | 'start' | 'close'
> {
  const organizations = app.get(OrganizationsService);
  const tokens = app.get(TokensService);
  const students = app.get(StudentsService);
  const users = app.get(UsersService);
  const oauthClients = app.get(OAuthClientsService);
  return {
    createOrganization: (input = {}) => organizations.create({ name: 'Test School', ...input }),
    createToken: async (organizationId, scopes, tokenOptions = {}) => {
      const { token, record } = await tokens.create(
        {
          organizationId,
          name: tokenOptions.name ?? 'test',
          scopes,
          expiresAt: tokenOptions.expiresAt ?? null,
          userId: tokenOptions.userId ?? null,
        },
        OPERATOR,
      );
      return { token, id: record.id };
    },
    revokeToken: async (id) => {
      await tokens.revoke(id, OPERATOR);
    },
    createUser: async (organizationId, email, password, userOptions = {}) => {
      const account = await users.findAccountByEmail(email);
      const { user } = await users.create({
        organizationId,
        email,
        ...(account ? { account } : { password }),
        ...(userOptions.role && { role: userOptions.role }),
      });
      return { id: user.id };
    },
    createOAuthClient: (organizationId, input) =>
      oauthClients.create(
        organizationId,
        {
          name: 'Test App',
          redirect_uris: [],
          scopes: ['all'],
          grant_types:
            input.type === 'confidential'
              ? ['authorization_code', 'refresh_token', 'client_credentials']
              : ['authorization_code', 'refresh_token'],
          ...input,
        },
        OPERATOR,
      ),
    insertStudents: async (organizationId, countOrRows, now) => {
      const rows =
        typeof countOrRows === 'number'
          ? demoStudents(organizationId, countOrRows, now)
          : countOrRows;
      await students.insertMany(rows);
      return rows;
    },
  };
}

export { ManualClock } from './manual-clock';
export { dropTestTemplates, prepareDatabase } from './test-database';
export { demoStudents } from '../seed/demo-students';
export { authorizeInBrowser, Browser, formAction, type AuthorizeResult } from './browser';
export type { Student } from '../students/student.entity';
// For benchmarks that write outbox events the way the API does (bench/delivery.bench.js).
export { EventsService } from '../events/events.service';
export { TransactionRunner } from '../common/transactions';
// For benchmarks that bulk-load rows without the list totals' triggers, then count the tallies
// afresh (bench/collection-size.bench.js).
export { LIST_TALLIES, tallyRecount, talliedFields } from '../database/list-tallies';
// For the list benchmark's check that its bare baseline sends the server's statement, text and
// values (bench/students-list.bench.js).
export { studentListStatements } from './list-statements';
// For the shared webhook test vectors (tooling/sdk-live/scripts/write-webhook-vectors.js): the
// signer and the body builder deliveries use, so the vectors are what the server sends.
export { Signer } from '../webhooks/signing';
export { payload as webhookPayload } from '../webhooks/attempter';
