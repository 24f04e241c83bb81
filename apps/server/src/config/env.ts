/**
 * The only place that reads `process.env`. Everything else receives the parsed `AppConfig`.
 * A bad value stops boot with a message that names the variable.
 */
import path from 'node:path';
import { z } from 'zod';

export const REPO_ROOT = path.resolve(__dirname, '..', '..', '..', '..');

const booleanString = z
  .enum(['true', 'false', '1', '0'], { message: 'must be true or false' })
  .transform((v) => v === 'true' || v === '1');

const positiveInt = z.coerce.number().int().positive();

const EnvSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  HOST: z.string().min(1).default('127.0.0.1'),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
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
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** Absolute base for pagination links, e.g. https://api.example.com. Default: from the request. */
  PUBLIC_URL: z.string().url().optional(),
  /** Requests per rolling minute for an organization without a limit of its own. */
  RATE_LIMIT_DEFAULT: positiveInt.default(600),
  /** Requests per rolling minute per client IP for requests without a valid token. */
  RATE_LIMIT_ANONYMOUS: positiveInt.default(60),
  /** Express `trust proxy`: set when behind a load balancer so client IPs are real. */
  TRUST_PROXY: booleanString.default('false'),
  /** `pnpm dev` only: seed an empty database and print a ready-to-use demo token. */
  DEV_BOOTSTRAP: booleanString.default('false'),
});

export type RawEnv = z.input<typeof EnvSchema>;

export type DatabaseConfig =
  | { type: 'sqlite'; path: string; migrateOnStart: boolean }
  | { type: 'postgres'; url: string; migrateOnStart: boolean };

export interface AppConfig {
  nodeEnv: 'development' | 'production' | 'test';
  host: string;
  port: number;
  database: DatabaseConfig;
  logLevel: z.infer<typeof EnvSchema>['LOG_LEVEL'];
  publicUrl?: string;
  rateLimit: { defaultPerMinute: number; anonymousPerMinute: number; windowMs: number };
  trustProxy: boolean;
  devBootstrap: boolean;
}

export class ConfigError extends Error {}

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
  const url = e.DATABASE_URL;
  const database: DatabaseConfig =
    url && /^postgres(ql)?:/.test(url)
      ? { type: 'postgres', url, migrateOnStart: e.DATABASE_MIGRATE_ON_START ?? false }
      : {
          type: 'sqlite',
          path: url
            ? path.resolve(url.slice('sqlite:'.length))
            : path.join(REPO_ROOT, 'data', 'platform.sqlite'),
          migrateOnStart: e.DATABASE_MIGRATE_ON_START ?? true,
        };
  return {
    nodeEnv: e.NODE_ENV,
    host: e.HOST,
    port: e.PORT,
    database,
    logLevel: e.LOG_LEVEL,
    ...(e.PUBLIC_URL && { publicUrl: e.PUBLIC_URL.replace(/\/$/, '') }),
    rateLimit: {
      defaultPerMinute: e.RATE_LIMIT_DEFAULT,
      anonymousPerMinute: e.RATE_LIMIT_ANONYMOUS,
      windowMs: 60_000,
    },
    trustProxy: e.TRUST_PROXY,
    devBootstrap: e.DEV_BOOTSTRAP,
  };
}
