import path from 'node:path';
import { ConfigError, loadConfig, REPO_ROOT, SQLITE_CACHE_DEFAULT_MIB } from './env';

describe(loadConfig.name, () => {
  it('defaults to SQLite under data/ at the repository root, migrating on start', () => {
    const config = loadConfig({});
    expect(config.database).toEqual({
      type: 'sqlite',
      path: path.join(REPO_ROOT, 'data', 'platform.sqlite'),
      migrateOnStart: true,
      cacheMib: SQLITE_CACHE_DEFAULT_MIB,
    });
    expect(config.port).toBe(3000);
    expect(config.rateLimit.defaultPerMinute).toBe(600);
  });

  it('selects another SQLite file or PostgreSQL from DATABASE_URL', () => {
    expect(loadConfig({ DATABASE_URL: 'sqlite:/tmp/x.sqlite' }).database).toMatchObject({
      type: 'sqlite',
      path: '/tmp/x.sqlite',
    });
    expect(loadConfig({ DATABASE_URL: 'postgres://u:p@h/db' }).database).toEqual({
      type: 'postgres',
      url: 'postgres://u:p@h/db',
      migrateOnStart: false,
    });
  });

  it.each([
    [{ PORT: 'eighty' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    [{ SQLITE_CACHE_MIB: '0' }, 'SQLITE_CACHE_MIB'],
    [{ SQLITE_CACHE_MIB: '2.5' }, 'SQLITE_CACHE_MIB'],
    [{ SQLITE_CACHE_MIB: '16MB' }, 'SQLITE_CACHE_MIB'],
    [{ SQLITE_CACHE_MIB: '65537' }, 'SQLITE_CACHE_MIB'],
    [{ RATE_LIMIT_DEFAULT: '0' }, 'RATE_LIMIT_DEFAULT'],
    [{ TRUST_PROXY: 'maybe' }, 'TRUST_PROXY'],
    [{ WEBHOOK_RETRY_SCHEDULE: '5s,soon' }, 'WEBHOOK_RETRY_SCHEDULE'],
    [{ WEBHOOK_TIMEOUT: '15' }, 'WEBHOOK_TIMEOUT'],
    [{ WEBHOOK_CONCURRENCY: '0' }, 'WEBHOOK_CONCURRENCY'],
    [{ WEBHOOK_ORGANIZATION_CONCURRENCY: 'half' }, 'WEBHOOK_ORGANIZATION_CONCURRENCY'],
  ])('refuses %j, naming %s', (env, variable) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(
      new RegExp(`^Invalid environment configuration:\\n  ${variable}: `),
    );
  });

  it('reads the webhook timings as durations, with the documented defaults', () => {
    expect(loadConfig({}).webhooks).toMatchObject({
      retryScheduleMs: [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000],
      timeoutMs: 15_000,
      disableAfterMs: 5 * 86_400_000,
      allowPrivateUrls: false,
      dispatcher: true,
    });
    expect(
      loadConfig({ WEBHOOK_RETRY_SCHEDULE: '250ms,2s', WEBHOOK_TIMEOUT: '1m' }).webhooks,
    ).toMatchObject({ retryScheduleMs: [250, 2000], timeoutMs: 60_000 });
  });

  it('gives one organization a quarter of the delivery slots unless told otherwise', () => {
    expect(loadConfig({}).webhooks).toMatchObject({
      concurrency: 64,
      endpointConcurrency: 8,
      organizationConcurrency: 16,
    });
    expect(loadConfig({ WEBHOOK_CONCURRENCY: '10' }).webhooks.organizationConcurrency).toBe(3);
    expect(
      loadConfig({ WEBHOOK_CONCURRENCY: '10', WEBHOOK_ORGANIZATION_CONCURRENCY: '7' }).webhooks
        .organizationConcurrency,
    ).toBe(7);
    // More than the whole would mean nothing: it is held to WEBHOOK_CONCURRENCY.
    expect(
      loadConfig({ WEBHOOK_CONCURRENCY: '10', WEBHOOK_ORGANIZATION_CONCURRENCY: '50' }).webhooks
        .organizationConcurrency,
    ).toBe(10);
  });
});
