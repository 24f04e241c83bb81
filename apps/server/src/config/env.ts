/**
 * The only place that reads `process.env`. Everything else receives the parsed `AppConfig`.
 * A bad value stops boot with a message that names the variable.
 */
import path from 'node:path';
import {
  AUDIT_DEFAULT_RETENTION_DAYS,
  AUDIT_MIN_RETENTION_DAYS,
  EXPORT_DEFAULT_RETENTION_DAYS,
  REQUEST_LOG_DEFAULT_RETENTION_DAYS,
} from '@platform/contract';
import { z } from 'zod';

export const REPO_ROOT = path.resolve(__dirname, '..', '..', '..', '..');

const booleanString = z
  .enum(['true', 'false', '1', '0'], { message: 'must be true or false' })
  .transform((v) => v === 'true' || v === '1');

const positiveInt = z.coerce.number().int().positive();

const DURATION_UNITS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** `250ms`, `5s`, `30m`, `2h`, `5d`: the readable way to write the webhook timings. */
export function parseDuration(value: string): number | undefined {
  const match = /^(\d{1,9})(ms|s|m|h|d)$/.exec(value.trim());
  return match
    ? Number(match[1]) * DURATION_UNITS[match[2] as keyof typeof DURATION_UNITS]
    : undefined;
}

const durationMessage = 'must be a duration such as 250ms, 5s, 30m, 2h or 5d';
const duration = z
  .string()
  .refine((v) => parseDuration(v) !== undefined, durationMessage)
  .transform((v) => parseDuration(v) as number);

const durationList = z
  .string()
  .refine(
    (v) => v.split(',').every((part) => parseDuration(part) !== undefined),
    'must be a comma-separated list of durations such as 5s,5m,30m,2h',
  )
  .transform((v) => v.split(',').map((part) => parseDuration(part) as number));

const base64Key = z
  .string()
  .refine((v) => Buffer.from(v, 'base64').length === 32, 'must be 32 bytes, base64-encoded')
  .transform((v) => Buffer.from(v, 'base64'));

/** `SQLITE_CACHE_MIB` unset (see docs/configuration.md, and bench/README.md for goal 6). */
export const SQLITE_CACHE_DEFAULT_MIB = 4;
/** A larger cache than this is a typo, not a setting: the server would hold it all in memory. */
const SQLITE_CACHE_MAX_MIB = 65_536;

const EnvSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  HOST: z.string().min(1).default('127.0.0.1'),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  /**
   * How long an idle keep-alive connection stays open. Above the idle timeout of the load
   * balancers in front (60 s on AWS ALB, nginx, HAProxy's usual setting), so the server never
   * closes a connection a balancer is about to reuse (the cause of sporadic 502s).
   */
  HTTP_KEEP_ALIVE_TIMEOUT: duration
    .pipe(z.number().min(1000, 'must be at least 1s'))
    .default('65s'),
  /** After SIGTERM, how long requests in flight may take to finish before their connections close. */
  HTTP_SHUTDOWN_GRACE: duration.default('10s'),
  /** Unset: SQLite at data/platform.sqlite. `sqlite:<path>` or `postgres://…` otherwise. */
  DATABASE_URL: z
    .string()
    .refine(
      (v) => /^(sqlite:.+|postgres(ql)?:\/\/.+)$/.test(v),
      'must be sqlite:<path> or postgres://…',
    )
    .optional(),
  /** Run pending migrations at boot. Default: on for SQLite, off for PostgreSQL (run `pnpm platform migrate`). */
  DATABASE_MIGRATE_ON_START: booleanString.optional(),
  /**
   * SQLite's page cache, in MiB: database pages the connection keeps in memory (SQLite's
   * `cache_size`). It fills up to this bound as pages are read, so it is part of the server's
   * resident memory. Pages not in it are read from the operating system's file cache.
   */
  SQLITE_CACHE_MIB: z.coerce
    .number({ invalid_type_error: 'must be a whole number of MiB' })
    .int('must be a whole number of MiB')
    .min(1, 'must be at least 1 (MiB)')
    .max(SQLITE_CACHE_MAX_MIB, `must be at most ${SQLITE_CACHE_MAX_MIB} (MiB)`)
    .default(SQLITE_CACHE_DEFAULT_MIB),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /**
   * Scale-out: Redis for the shared rate limit and the BullMQ delivery queue (every instance
   * uses the same). Unset: in-process memory and the embedded dispatcher.
   */
  REDIS_URL: z
    .string()
    .refine((v) => /^rediss?:\/\/.+/.test(v), 'must be redis://… or rediss://…')
    .optional(),
  /** Prefix of every Redis key and queue, so several deployments can share one Redis. */
  REDIS_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_.-]{1,64}$/, 'must be 1 to 64 letters, digits, _, . or -')
    .default('platform'),
  /** Absolute base for pagination links, e.g. https://api.example.com. Default: from the request. */
  PUBLIC_URL: z.string().url().optional(),
  /** Requests per rolling minute for an organization without a limit of its own. */
  RATE_LIMIT_DEFAULT: positiveInt.default(600),
  /** Requests per rolling minute per client IP for requests without a valid token. */
  RATE_LIMIT_ANONYMOUS: positiveInt.default(60),
  /** Requests per rolling minute per client IP to the OAuth endpoints and sign-in pages. */
  RATE_LIMIT_OAUTH: positiveInt.default(300),
  /** Requests per rolling minute per confidential OAuth client that authenticates (token, revoke, introspect). */
  RATE_LIMIT_OAUTH_CLIENT: positiveInt.default(600),
  /** Express `trust proxy`: set when behind a load balancer so client IPs are real. */
  TRUST_PROXY: booleanString.default('false'),
  /** `pnpm dev` only: seed an empty database and print a ready-to-use demo token. */
  DEV_BOOTSTRAP: booleanString.default('false'),
  /** `pnpm dev` only: serve the portal from its sources through Vite (hot reload), not its dist. */
  PORTAL_DEV: booleanString.default('false'),
  /** The built portal (`apps/portal/dist` of the repository by default), served under /portal. */
  PORTAL_DIST_DIR: z.string().min(1).optional(),
  /**
   * Encrypts webhook signing secrets at rest (AES-256-GCM): 32 random bytes, base64. Required
   * with PostgreSQL; with SQLite, unset means a key file beside the database, made on first use.
   */
  WEBHOOK_SECRETS_KEY: base64Key.optional(),
  /** Allow http:// and loopback/private webhook URLs: local development and tests only. */
  WEBHOOK_ALLOW_PRIVATE_URLS: booleanString.default('false'),
  /** Delays between a failed attempt and the next; after the last, the delivery is failed. */
  WEBHOOK_RETRY_SCHEDULE: durationList.default('5s,5m,30m,2h,5h,10h,10h'),
  /** An attempt whose endpoint answers no 2xx status within this time has failed. */
  WEBHOOK_TIMEOUT: duration.default('15s'),
  /** An endpoint whose attempts have all failed for this long is disabled. */
  WEBHOOK_DISABLE_AFTER: duration.default('5d'),
  /** Attempts in flight at once in this process, and at most per endpoint. */
  WEBHOOK_CONCURRENCY: positiveInt.default(64),
  WEBHOOK_ENDPOINT_CONCURRENCY: positiveInt.default(8),
  /** Attempts in flight at once per organization; unset, a quarter of WEBHOOK_CONCURRENCY. */
  WEBHOOK_ORGANIZATION_CONCURRENCY: positiveInt.optional(),
  /** How often the dispatcher looks for due work it was not told about (retries, other writers). */
  WEBHOOK_POLL_INTERVAL: duration.default('1s'),
  /** On shutdown, how long in-flight attempts may take to finish. */
  WEBHOOK_SHUTDOWN_GRACE: duration.default('10s'),
  /**
   * Outgoing mail (invitations): `smtp://user:pass@host:587` or `smtps://…`. Unset, no mail is
   * sent and an invitation's link is shown to the admin who made it (development).
   */
  SMTP_URL: z
    .string()
    .url()
    .refine((url) => /^smtps?:\/\//.test(url), 'must be an smtp:// or smtps:// URL')
    .optional(),
  /** The sender of every message: an address, optionally with a name (`Platform <no-reply@…>`). */
  MAIL_FROM: z.string().min(3).max(320).default('Platform <no-reply@localhost>'),
  /** Delays between a failed send and the next; after the last, the message is given up. */
  MAIL_RETRY_SCHEDULE: durationList.default('10s,1m,5m,30m,2h,6h,12h'),
  /** `pnpm dev` only: the webhook inspector's URL, registered for the demo organization. */
  DEV_WEBHOOK_INSPECTOR_URL: z.string().url().default('http://127.0.0.1:3001/webhooks'),
  /** When set, `GET /metrics` wants `Authorization: Bearer <METRICS_TOKEN>`. */
  METRICS_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  /** Run the webhook dispatcher in this process. */
  WEBHOOK_DISPATCHER: booleanString.default('true'),
  /**
   * How long audit entries are kept, in days: at least 90 (what customers are promised), so a
   * shorter value is refused rather than silently raised.
   */
  AUDIT_RETENTION_DAYS: z.coerce
    .number()
    .int('must be a whole number of days')
    .min(
      AUDIT_MIN_RETENTION_DAYS,
      `must be at least ${AUDIT_MIN_RETENTION_DAYS} (days): audit entries are kept at least that long`,
    )
    .default(AUDIT_DEFAULT_RETENTION_DAYS),
  /** How long an export's file is kept after it finishes; then it is deleted. */
  EXPORT_RETENTION: duration
    .pipe(z.number().min(1000, 'must be at least 1s'))
    .default(`${EXPORT_DEFAULT_RETENTION_DAYS}d`),
  /**
   * How long an import's runner holds it without progress before another instance (or this one,
   * restarted) takes it over and resumes it.
   */
  IMPORT_LEASE: duration.pipe(z.number().min(1000, 'must be at least 1s')).default('30s'),
  /** Whether each organization's API requests are recorded for `GET /v1/request_logs`. */
  REQUEST_LOG: booleanString.default('true'),
  /** How long request log entries are kept, in days (pruned hourly). */
  REQUEST_LOG_RETENTION_DAYS: z.coerce
    .number()
    .int('must be a whole number of days')
    .min(1, 'must be at least 1 (days)')
    .max(400, 'must be at most 400 (days)')
    .default(REQUEST_LOG_DEFAULT_RETENTION_DAYS),
  /** How long a list's `q` search may take before it is abandoned with a 503. */
  SEARCH_TIMEOUT: duration.pipe(z.number().min(1, 'must be at least 1ms')).default('100ms'),
  /**
   * Rows a list counts past the requested page before `meta.total` becomes a lower bound
   * (`total_exact: false`); unset, TOTAL_COUNT_AHEAD (10,000). Tests set it small.
   */
  LIST_TOTAL_COUNT_AHEAD: positiveInt.optional(),
  /**
   * The same for a `q` search; unset, SEARCH_COUNT_AHEAD (200), and never more than
   * LIST_TOTAL_COUNT_AHEAD. Tests set it small.
   */
  LIST_SEARCH_COUNT_AHEAD: positiveInt.optional(),
  /**
   * SQLite: a `q` search of 3+ characters in an organization of at most this many records (its
   * tally) scans them instead of the database-wide trigram index; 0 never. Unset,
   * SQLITE_SCAN_WHOLE (3,000).
   */
  LIST_SEARCH_SCAN_ROWS: z.coerce.number().int().min(0).optional(),
  /**
   * Token lookups kept in memory (an LRU of this many tokens); 0 turns the cache off. Every
   * change that can alter a lookup's answer invalidates it on the next request (auth/token-cache.ts).
   */
  TOKEN_CACHE_SIZE: z.coerce.number().int().min(0).default(10_000),
});

export type RawEnv = z.input<typeof EnvSchema>;
type ParsedEnv = z.infer<typeof EnvSchema>;

export type DatabaseConfig =
  | { type: 'sqlite'; path: string; migrateOnStart: boolean; cacheMib: number }
  | { type: 'postgres'; url: string; migrateOnStart: boolean };

export interface AppConfig {
  nodeEnv: 'development' | 'production' | 'test';
  host: string;
  port: number;
  database: DatabaseConfig;
  logLevel: z.infer<typeof EnvSchema>['LOG_LEVEL'];
  publicUrl?: string;
  rateLimit: {
    defaultPerMinute: number;
    anonymousPerMinute: number;
    oauthPerMinute: number;
    oauthClientPerMinute: number;
    windowMs: number;
  };
  trustProxy: boolean;
  http: {
    keepAliveTimeoutMs: number;
    /** Just above the keep-alive timeout, as Node requires of a server that reuses connections. */
    headersTimeoutMs: number;
    shutdownGraceMs: number;
  };
  devBootstrap: boolean;
  devWebhookInspectorUrl: string;
  portal: { dev: boolean; distDir: string };
  webhooks: WebhookConfig;
  /** Set in the scale-out deployment. */
  redis?: { url: string; prefix: string };
  metricsToken?: string;
  /** The time budget of a list's `q` search. */
  searchTimeoutMs: number;
  /** `LIST_TOTAL_COUNT_AHEAD`, `LIST_SEARCH_COUNT_AHEAD` and `LIST_SEARCH_SCAN_ROWS`, when set. */
  list: { totalCountAhead?: number; searchCountAhead?: number; searchScanRows?: number };
  audit: { retentionDays: number };
  /** `EXPORT_RETENTION`: how long an export's file is kept. */
  exports: { retentionMs: number };
  /** `IMPORT_LEASE`: how long a runner's claim on an import holds without progress. */
  imports: { leaseMs: number };
  requestLog: { enabled: boolean; retentionDays: number };
  /** `TOKEN_CACHE_SIZE`: token lookups kept in memory; 0, none. */
  tokenCacheSize: number;
  /** Outgoing mail; `smtpUrl` unset: none is sent (links are shown instead). */
  mail: { smtpUrl?: string; from: string; retryScheduleMs: number[] };
}

export interface WebhookConfig {
  /** Names this server's API reference, so a receiver can see who calls and read about it. */
  userAgent: string;
  secretsKey?: Buffer;
  allowPrivateUrls: boolean;
  retryScheduleMs: number[];
  timeoutMs: number;
  disableAfterMs: number;
  concurrency: number;
  endpointConcurrency: number;
  /** So one organization's slow endpoints or backlog leave the other slots to the others. */
  organizationConcurrency: number;
  pollIntervalMs: number;
  shutdownGraceMs: number;
  dispatcher: boolean;
}

export class ConfigError extends Error {}

/**
 * The origin this server names itself by outside a request (OAuth issuer, webhook User-Agent):
 * `PUBLIC_URL`, else the address it listens on, with a wildcard host read as loopback.
 */
export function serverOrigin(config: Pick<AppConfig, 'publicUrl' | 'host' | 'port'>): string {
  if (config.publicUrl) return config.publicUrl;
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  return `http://${host.includes(':') ? `[${host}]` : host}:${config.port}`;
}

export function loadConfig(env: Record<string, string | undefined> = process.env): AppConfig {
  // Empty strings mean "unset", as in most .env tooling.
  const cleaned = Object.fromEntries(
    Object.entries(env).filter(([, v]) => v !== undefined && v !== ''),
  );
  const parsed = EnvSchema.safeParse(cleaned);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `  ${issue.path.join('.')}: ${issue.message}`);
    throw new ConfigError(`Invalid environment configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  const database = databaseConfig(e);
  const publicUrl = e.PUBLIC_URL?.replace(/\/$/, '');
  const origin = serverOrigin({ publicUrl, host: e.HOST, port: e.PORT });
  return {
    nodeEnv: e.NODE_ENV,
    host: e.HOST,
    port: e.PORT,
    database,
    logLevel: e.LOG_LEVEL,
    ...(publicUrl && { publicUrl }),
    rateLimit: {
      defaultPerMinute: e.RATE_LIMIT_DEFAULT,
      anonymousPerMinute: e.RATE_LIMIT_ANONYMOUS,
      oauthPerMinute: e.RATE_LIMIT_OAUTH,
      oauthClientPerMinute: e.RATE_LIMIT_OAUTH_CLIENT,
      windowMs: 60_000,
    },
    trustProxy: e.TRUST_PROXY,
    http: {
      keepAliveTimeoutMs: e.HTTP_KEEP_ALIVE_TIMEOUT,
      headersTimeoutMs: e.HTTP_KEEP_ALIVE_TIMEOUT + 1000,
      shutdownGraceMs: e.HTTP_SHUTDOWN_GRACE,
    },
    devBootstrap: e.DEV_BOOTSTRAP,
    devWebhookInspectorUrl: e.DEV_WEBHOOK_INSPECTOR_URL,
    portal: {
      dev: e.PORTAL_DEV,
      distDir: e.PORTAL_DIST_DIR ?? path.join(REPO_ROOT, 'apps', 'portal', 'dist'),
    },
    ...(e.REDIS_URL && { redis: { url: e.REDIS_URL, prefix: e.REDIS_PREFIX } }),
    ...(e.METRICS_TOKEN && { metricsToken: e.METRICS_TOKEN }),
    searchTimeoutMs: e.SEARCH_TIMEOUT,
    list: {
      ...(e.LIST_TOTAL_COUNT_AHEAD && { totalCountAhead: e.LIST_TOTAL_COUNT_AHEAD }),
      ...(e.LIST_SEARCH_COUNT_AHEAD && { searchCountAhead: e.LIST_SEARCH_COUNT_AHEAD }),
      ...(e.LIST_SEARCH_SCAN_ROWS !== undefined && { searchScanRows: e.LIST_SEARCH_SCAN_ROWS }),
    },
    audit: { retentionDays: e.AUDIT_RETENTION_DAYS },
    exports: { retentionMs: e.EXPORT_RETENTION },
    imports: { leaseMs: e.IMPORT_LEASE },
    requestLog: { enabled: e.REQUEST_LOG, retentionDays: e.REQUEST_LOG_RETENTION_DAYS },
    tokenCacheSize: e.TOKEN_CACHE_SIZE,
    mail: {
      ...(e.SMTP_URL && { smtpUrl: e.SMTP_URL }),
      from: e.MAIL_FROM,
      retryScheduleMs: e.MAIL_RETRY_SCHEDULE,
    },
    webhooks: webhookConfig(e, origin),
  };
}

/** `DATABASE_URL`: Postgres for a `postgres:` URL, else SQLite at its path or the default file. */
function databaseConfig(e: ParsedEnv): DatabaseConfig {
  const url = e.DATABASE_URL;
  return url && /^postgres(ql)?:/.test(url)
    ? { type: 'postgres', url, migrateOnStart: e.DATABASE_MIGRATE_ON_START ?? false }
    : {
        type: 'sqlite',
        path: url
          ? path.resolve(url.slice('sqlite:'.length))
          : path.join(REPO_ROOT, 'data', 'platform.sqlite'),
        migrateOnStart: e.DATABASE_MIGRATE_ON_START ?? true,
        cacheMib: e.SQLITE_CACHE_MIB,
      };
}

/** The `WEBHOOK_*` settings; `origin` names this server in the User-Agent. */
function webhookConfig(e: ParsedEnv, origin: string): WebhookConfig {
  return {
    userAgent: `PlatformWebhooks/1.0 (+${origin}/docs)`,
    ...(e.WEBHOOK_SECRETS_KEY && { secretsKey: e.WEBHOOK_SECRETS_KEY }),
    allowPrivateUrls: e.WEBHOOK_ALLOW_PRIVATE_URLS,
    retryScheduleMs: e.WEBHOOK_RETRY_SCHEDULE,
    timeoutMs: e.WEBHOOK_TIMEOUT,
    disableAfterMs: e.WEBHOOK_DISABLE_AFTER,
    concurrency: e.WEBHOOK_CONCURRENCY,
    endpointConcurrency: e.WEBHOOK_ENDPOINT_CONCURRENCY,
    organizationConcurrency: Math.min(
      e.WEBHOOK_CONCURRENCY,
      e.WEBHOOK_ORGANIZATION_CONCURRENCY ?? Math.ceil(e.WEBHOOK_CONCURRENCY / 4),
    ),
    pollIntervalMs: e.WEBHOOK_POLL_INTERVAL,
    shutdownGraceMs: e.WEBHOOK_SHUTDOWN_GRACE,
    dispatcher: e.WEBHOOK_DISPATCHER,
  };
}
