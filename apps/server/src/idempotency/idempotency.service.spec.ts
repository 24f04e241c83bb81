/**
 * The claim/replay/release protocol against a real database: a fresh SQLite file, or a fresh
 * PostgreSQL database when TEST_DATABASE_URL is set (as CI does), with just the tables it needs.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { DataSource, type DataSourceOptions } from 'typeorm';
import { Clock } from '../common/clock';
import { ProblemException } from '../common/problem.exception';
import { TransactionRunner } from '../common/transactions';
import { migrationClasses } from '../database/migration';
import { Sql } from '../database/sql';
import { initialMigration } from '../migrations/1763800000000-initial';
import { Organization } from '../organizations/organization.entity';
import { IdempotencyKey } from './idempotency-key.entity';
import {
  IDEMPOTENCY_KEY_TTL_MS,
  IDEMPOTENCY_LEASE_MS,
  type IdempotencyBegin,
  type IdempotencyClaim,
  IdempotencyService,
  parseIdempotencyKey,
} from './idempotency.service';
import { idempotencyKeysMigration } from './migrations/1763900000001-idempotency-keys';

const ADMIN_URL = process.env.TEST_DATABASE_URL;
const ORG = 'org_01JC0IDEMP0TENCY00000000001';
const OTHER_ORG = 'org_01JC0IDEMP0TENCY00000000002';
const FP = 'a'.repeat(64);
const OTHER_FP = 'b'.repeat(64);

let dataSource: DataSource;
let cleanup: () => Promise<void>;
let service: IdempotencyService;
let now: number;
/** The service's injected clock, reading `now`: tests move it to expire keys and leases. */
const clock = new (class extends Clock {
  override nowMs(): number {
    return now;
  }
})();

async function openDatabase(): Promise<{ options: DataSourceOptions; drop(): Promise<void> }> {
  const entities = [Organization, IdempotencyKey];
  const migrations = [initialMigration, idempotencyKeysMigration];
  if (ADMIN_URL) {
    const name = `platform_idem_${randomBytes(6).toString('hex')}`;
    const admin = new Client({ connectionString: ADMIN_URL });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.end();
    const url = new URL(ADMIN_URL);
    url.pathname = `/${name}`;
    return {
      options: {
        type: 'postgres',
        url: url.toString(),
        entities,
        migrations: migrationClasses('postgres', migrations),
        extra: { max: 10 },
      },
      drop: async () => {
        const client = new Client({ connectionString: ADMIN_URL });
        await client.connect();
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        await client.end();
      },
    };
  }
  const dir = mkdtempSync(path.join(tmpdir(), 'idempotency-'));
  return {
    options: {
      type: 'better-sqlite3',
      database: path.join(dir, 'db.sqlite'),
      entities,
      migrations: migrationClasses('sqlite', migrations),
    },
    drop: () => Promise.resolve(rmSync(dir, { recursive: true, force: true })),
  };
}

beforeAll(async () => {
  const database = await openDatabase();
  dataSource = new DataSource(database.options);
  await dataSource.initialize();
  await dataSource.runMigrations();
  cleanup = async () => {
    await dataSource.destroy();
    await database.drop();
  };
  const at = new Date();
  await dataSource.getRepository(Organization).insert(
    [ORG, OTHER_ORG].map((id) => ({
      id,
      name: id,
      plan: 'standard' as const,
      rateLimitPerMinute: null,
      createdAt: at,
      updatedAt: at,
    })),
  );
});

afterAll(async () => {
  await cleanup?.();
});

beforeEach(async () => {
  await dataSource.getRepository(IdempotencyKey).clear();
  service = new IdempotencyService(
    dataSource.getRepository(IdempotencyKey),
    new TransactionRunner(dataSource, new Sql(dataSource)),
    new Sql(dataSource),
    clock,
  );
  now = Date.parse('2026-11-22T10:00:00.000Z');
});

function claimOf(result: IdempotencyBegin): IdempotencyClaim {
  if (result.kind !== 'claimed') throw new Error(`expected a claim, got ${result.kind}`);
  return result.claim;
}

async function problemOf(promise: Promise<unknown>): Promise<ProblemException> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof ProblemException)) throw new Error(`expected a ProblemException`);
  return error;
}

describe(parseIdempotencyKey.name, () => {
  it('returns undefined without the header and the key as sent otherwise', () => {
    expect(parseIdempotencyKey(undefined)).toBeUndefined();
    expect(parseIdempotencyKey('k'.repeat(255))).toBe('k'.repeat(255));
  });

  it.each([
    ['empty', ''],
    ['blank', '   '],
    ['longer than 255 characters', 'k'.repeat(256)],
  ])('refuses a key that is %s with a 400 naming the header', (_what, key) => {
    let error: unknown;
    try {
      parseIdempotencyKey(key);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ProblemException);
    expect(error).toMatchObject({
      code: 'validation_error',
      options: { errors: [{ path: 'header.Idempotency-Key' }] },
    });
  });
});

describe(IdempotencyService.name, () => {
  it('claims a new key, then replays the stored response', async () => {
    const claim = claimOf(await service.begin(ORG, 'k1', FP));
    expect(await service.complete(claim, 201, { id: 'stu_1', nested: { a: [1, 2] } })).toBe(true);

    await expect(service.begin(ORG, 'k1', FP)).resolves.toEqual({
      kind: 'replay',
      status: 201,
      body: { id: 'stu_1', nested: { a: [1, 2] } },
    });
  });

  it('replays a response without a body as one without a body', async () => {
    const claim = claimOf(await service.begin(ORG, 'k1', FP));
    await service.complete(claim, 204, undefined);

    await expect(service.begin(ORG, 'k1', FP)).resolves.toEqual({
      kind: 'replay',
      status: 204,
      body: undefined,
    });
  });

  it('answers 409 with Retry-After while the first request is still in progress', async () => {
    claimOf(await service.begin(ORG, 'k1', FP));
    now += IDEMPOTENCY_LEASE_MS - 1;

    const problem = await problemOf(service.begin(ORG, 'k1', FP));

    expect(problem.code).toBe('conflict');
    expect(problem.detail).toMatch(/still being processed/);
    expect(problem.options.headers).toEqual({ 'Retry-After': '1' });
  });

  it('answers 409 for the same key with a different request, in progress or completed', async () => {
    const claim = claimOf(await service.begin(ORG, 'k1', FP));
    expect((await problemOf(service.begin(ORG, 'k1', OTHER_FP))).detail).toMatch(
      /used with a different request/,
    );

    await service.complete(claim, 201, { id: 'stu_1' });
    const problem = await problemOf(service.begin(ORG, 'k1', OTHER_FP));
    expect(problem.code).toBe('conflict');
    expect(problem.detail).toMatch(
      /Idempotency-Key 'k1' was already used with a different request/,
    );
  });

  it('frees a released key for any request', async () => {
    await service.release(claimOf(await service.begin(ORG, 'k1', FP)));

    expect((await service.begin(ORG, 'k1', OTHER_FP)).kind).toBe('claimed');
  });

  it('keeps keys apart per organization', async () => {
    await service.complete(claimOf(await service.begin(ORG, 'k1', FP)), 201, { org: 1 });

    expect((await service.begin(OTHER_ORG, 'k1', OTHER_FP)).kind).toBe('claimed');
    expect(await service.begin(ORG, 'k1', FP)).toMatchObject({ kind: 'replay', body: { org: 1 } });
  });

  it('treats a key older than 24 hours as new, whatever it was used for', async () => {
    await service.complete(claimOf(await service.begin(ORG, 'k1', FP)), 201, { first: true });

    now += IDEMPOTENCY_KEY_TTL_MS - 1;
    expect((await service.begin(ORG, 'k1', FP)).kind).toBe('replay');

    now += 2;
    const fresh = claimOf(await service.begin(ORG, 'k1', OTHER_FP));
    await service.complete(fresh, 201, { second: true });
    expect(await service.begin(ORG, 'k1', OTHER_FP)).toMatchObject({ body: { second: true } });
  });

  it('lets a request take over a claim whose lease ran out, and fences off the old holder', async () => {
    const stale = claimOf(await service.begin(ORG, 'k1', FP));
    now += IDEMPOTENCY_LEASE_MS + 1;

    const fresh = claimOf(await service.begin(ORG, 'k1', FP));

    // The old holder finishing late neither frees nor overwrites the new holder's claim.
    await service.release(stale);
    expect(await service.complete(stale, 201, { stale: true })).toBe(false);
    expect((await problemOf(service.begin(ORG, 'k1', FP))).detail).toMatch(/still being processed/);
    expect(await service.complete(fresh, 201, { fresh: true })).toBe(true);
    expect(await service.begin(ORG, 'k1', FP)).toMatchObject({ body: { fresh: true } });
  });

  it('does not let a different request take over an abandoned claim', async () => {
    claimOf(await service.begin(ORG, 'k1', FP));
    now += IDEMPOTENCY_LEASE_MS + 1;

    expect((await problemOf(service.begin(ORG, 'k1', OTHER_FP))).detail).toMatch(
      /different request/,
    );
  });

  it('gives a key to exactly one of many concurrent requests', async () => {
    const results = await Promise.allSettled(
      Array.from({ length: 10 }, () => service.begin(ORG, 'race', FP)),
    );

    const claimed = results.filter((r) => r.status === 'fulfilled' && r.value.kind === 'claimed');
    const refused = results.filter(
      (r) => r.status === 'rejected' && (r.reason as ProblemException).code === 'conflict',
    );
    expect(claimed).toHaveLength(1);
    expect(refused).toHaveLength(9);
  });

  it('gives an abandoned claim to exactly one of many concurrent retries', async () => {
    claimOf(await service.begin(ORG, 'race', FP));
    now += IDEMPOTENCY_LEASE_MS + 1;

    const results = await Promise.allSettled(
      Array.from({ length: 10 }, () => service.begin(ORG, 'race', FP)),
    );

    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
  });

  it("survives another request's transaction rolling back while it claims", async () => {
    const sql = new Sql(dataSource);
    const transactions = new TransactionRunner(dataSource, sql);
    service = new IdempotencyService(
      dataSource.getRepository(IdempotencyKey),
      transactions,
      sql,
      clock,
    );
    let finishOther!: () => void;
    const otherMayFinish = new Promise<void>((resolve) => (finishOther = resolve));
    let otherStarted!: () => void;
    const otherIsOpen = new Promise<void>((resolve) => (otherStarted = resolve));
    // A handler's transaction that is open while our claim is written, then fails.
    const other = transactions.run(async (manager) => {
      await manager.query('SELECT 1');
      otherStarted();
      await otherMayFinish;
      throw new Error('the other request failed');
    });

    await otherIsOpen;
    const claiming = service.begin(ORG, 'k1', FP);
    await new Promise((resolve) => setTimeout(resolve, 20));
    finishOther();
    await expect(other).rejects.toThrow('the other request failed');
    const claim = claimOf(await claiming);

    const row = await dataSource.getRepository(IdempotencyKey).findOneBy({ key: 'k1' });
    expect(row).toMatchObject({ state: 'in_progress', lockToken: claim.token });
  });

  it('purges keys older than 24 hours and keeps the rest', async () => {
    await service.complete(claimOf(await service.begin(ORG, 'old', FP)), 201, {});
    now += IDEMPOTENCY_KEY_TTL_MS / 2;
    await service.complete(claimOf(await service.begin(ORG, 'young', FP)), 201, {});
    now += IDEMPOTENCY_KEY_TTL_MS / 2 + 1;

    expect(await service.purgeExpired()).toBe(1);
    const left = await dataSource.getRepository(IdempotencyKey).find();
    expect(left.map((k) => k.key)).toEqual(['young']);
  });

  it('runs the purge on an unref’d hourly timer that stops with the module', () => {
    const setSpy = jest.spyOn(global, 'setInterval');
    const clearSpy = jest.spyOn(global, 'clearInterval');
    try {
      service.onModuleInit();
      const timer = setSpy.mock.results[0]!.value as NodeJS.Timeout;
      expect(setSpy).toHaveBeenCalledWith(expect.any(Function), 60 * 60 * 1000);
      expect(timer.hasRef()).toBe(false);

      service.onModuleDestroy();
      expect(clearSpy).toHaveBeenCalledWith(timer);
    } finally {
      setSpy.mockRestore();
      clearSpy.mockRestore();
    }
  });
});
