/**
 * The claim/replay/release protocol against a real database: a fresh SQLite file, or a fresh
 * PostgreSQL database when TEST_DATABASE_URL is set (as CI does), with just the tables it needs.
 * Each request runs as the interceptor runs it: claim, work and stored response in one
 * `TransactionRunner.atomic` transaction. Durations are written out (24 h, 60 s, 1 h), not
 * imported from the code under test, so a wrong constant there fails here.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Logger } from '@nestjs/common';
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
import { IdempotencyService, parseIdempotencyKey } from './idempotency.service';
import { idempotencyKeysMigration } from './migrations/1763900000001-idempotency-keys';

const ADMIN_URL = process.env.TEST_DATABASE_URL;
const ORG = 'org_01JC0IDEMP0TENCY00000000001';
const OTHER_ORG = 'org_01JC0IDEMP0TENCY00000000002';
const FP = 'a'.repeat(64);
const OTHER_FP = 'b'.repeat(64);

let dataSource: DataSource;
let cleanup: () => Promise<void>;
let service: IdempotencyService;
let transactions: TransactionRunner;
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
  await dataSource.getRepository(Organization).delete({ name: 'work' });
  const sql = new Sql(dataSource);
  transactions = new TransactionRunner(dataSource, sql);
  service = new IdempotencyService(
    dataSource.getRepository(IdempotencyKey),
    transactions,
    sql,
    clock,
  );
  now = Date.parse('2026-11-22T10:00:00.000Z');
});

const HOUR = 60 * 60 * 1000;
const DAY = 24 * HOUR;
let workDone = 0;

type Outcome =
  | { kind: 'ran'; status: number }
  | { kind: 'replay'; status: number; body: unknown }
  | { kind: 'refused'; problem: ProblemException };

/**
 * One request with `key`, as the interceptor runs it: claim, then `work` (which writes an
 * organization row, the request's effect, and answers a status), then the stored response, all
 * in one transaction. `fail` throws after the work and before the commit.
 */
async function request(
  key: string,
  fingerprint = FP,
  options: {
    status?: number;
    org?: string;
    fail?: Error;
    during?: () => Promise<void>;
    /** Runs after the response is stored, before the commit (or `fail`). */
    beforeCommit?: () => Promise<void>;
  } = {},
): Promise<Outcome> {
  const org = options.org ?? ORG;
  try {
    const stored = await service.stored(org, key, fingerprint);
    if (stored) return stored;
    return await transactions.atomic(async (manager): Promise<Outcome> => {
      const begun = await service.begin(manager, org, key, fingerprint);
      if (begun.kind === 'replay') return begun;
      const at = clock.now();
      const id = `org_work${String(++workDone).padStart(22, '0')}`;
      await manager.insert(Organization, {
        id,
        name: 'work',
        plan: 'standard',
        rateLimitPerMinute: null,
        createdAt: at,
        updatedAt: at,
      });
      await options.during?.();
      const status = options.status ?? 201;
      if (status >= 200 && status < 300) {
        await service.complete(manager, begun.claim, status, { id });
      } else {
        await service.release(manager, begun.claim);
      }
      await options.beforeCommit?.();
      if (options.fail) throw options.fail;
      return { kind: 'ran', status };
    });
  } catch (error) {
    if (error instanceof ProblemException) return { kind: 'refused', problem: error };
    throw error;
  }
}

/** How many times a request's work was committed. */
async function effects(): Promise<number> {
  return dataSource.getRepository(Organization).countBy({ name: 'work' });
}

function keyRow(key: string) {
  return dataSource.getRepository(IdempotencyKey).findOneBy({ organizationId: ORG, key });
}

describe(parseIdempotencyKey.name, () => {
  it('returns undefined without the header and the key as sent otherwise', () => {
    expect(parseIdempotencyKey(undefined)).toBeUndefined();
    expect(parseIdempotencyKey('k'.repeat(255))).toBe('k'.repeat(255));
    // A hand-made request may repeat the header; Node would have joined it so.
    expect(parseIdempotencyKey(['a', 'b'])).toBe('a, b');
  });

  it.each([
    ['empty', '', 'must not be empty', 'too_small'],
    ['blank', '   ', 'must not be empty', 'too_small'],
    ['longer than 255 characters', 'k'.repeat(256), 'must be at most 255 characters', 'too_big'],
  ])('refuses a key that is %s with a 400 naming the header', (_what, key, message, code) => {
    let error: unknown;
    try {
      parseIdempotencyKey(key);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ProblemException);
    expect(error).toMatchObject({
      code: 'validation_error',
      detail: `Idempotency-Key: ${message}`,
      options: { errors: [{ path: 'header.Idempotency-Key', message, code }] },
    });
  });
});

describe(IdempotencyService.name, () => {
  it('runs a new key once and replays its stored response, status and body', async () => {
    const first = await request('k1');
    expect(first).toEqual({ kind: 'ran', status: 201 });
    const row = await keyRow('k1');

    const again = await request('k1');

    expect(again).toEqual({ kind: 'replay', status: 201, body: JSON.parse(row!.responseBody!) });
    expect(row).toMatchObject({ state: 'completed', responseStatus: 201, lockToken: null });
    expect(await effects()).toBe(1);
  });

  it('keeps nothing of a request whose transaction fails after its work: the retry runs it', async () => {
    // A crash between the work and the commit is the same to the database: nothing committed.
    await expect(request('k1', FP, { fail: new Error('process died') })).rejects.toThrow(
      'process died',
    );
    expect(await keyRow('k1')).toBeNull();
    expect(await effects()).toBe(0);

    expect(await request('k1')).toEqual({ kind: 'ran', status: 201 });
    expect(await request('k1')).toMatchObject({ kind: 'replay' });
    expect(await effects()).toBe(1);
  });

  it('never replays a stored response before its transaction commits (it may roll back)', async () => {
    let rollBack!: () => void;
    const gate = new Promise<void>((resolve) => (rollBack = resolve));
    let stored!: () => void;
    const responseStored = new Promise<void>((resolve) => (stored = resolve));
    const first = request('k1', FP, {
      beforeCommit: () => {
        stored();
        return gate;
      },
      fail: new Error('rolled back after storing the response'),
    });
    await responseStored;

    // A retry arriving now must not be answered from the uncommitted row.
    const early = service.stored(ORG, 'k1', FP);
    rollBack();
    await expect(first).rejects.toThrow('rolled back after storing the response');
    expect(await early).toBeUndefined();
    expect(await keyRow('k1')).toBeNull();
    expect(await request('k1')).toEqual({ kind: 'ran', status: 201 });
  });

  it('frees the key of a request that answered non-2xx, for any request', async () => {
    expect(await request('k1', FP, { status: 409 })).toEqual({ kind: 'ran', status: 409 });
    expect(await keyRow('k1')).toBeNull();

    expect(await request('k1', OTHER_FP)).toEqual({ kind: 'ran', status: 201 });
  });

  it('answers 409 for the same key with a different request', async () => {
    await request('k1');

    const other = await request('k1', OTHER_FP);

    expect(other).toMatchObject({ kind: 'refused' });
    const { problem } = other as { problem: ProblemException };
    expect(problem.code).toBe('conflict');
    expect(problem.detail).toBe(
      "Idempotency-Key 'k1' was already used with a different request (another path or body) in the last 24 hours; send a new key for a new request",
    );
    expect(problem.options.errors).toEqual([
      expect.objectContaining({ path: 'header.Idempotency-Key', code: 'idempotency_key_reused' }),
    ]);
  });

  it('keeps keys apart per organization', async () => {
    await request('k1');

    expect(await request('k1', OTHER_FP, { org: OTHER_ORG })).toEqual({ kind: 'ran', status: 201 });
    expect(await effects()).toBe(2);
  });

  it('treats a key older than 24 hours as new, whatever it was used for', async () => {
    await request('k1');

    now += DAY - 1;
    expect(await request('k1')).toMatchObject({ kind: 'replay' });
    expect(await request('k1', OTHER_FP)).toMatchObject({ kind: 'refused' });

    now += 2;
    expect(await request('k1', OTHER_FP)).toEqual({ kind: 'ran', status: 201 });
    expect(await request('k1', OTHER_FP)).toMatchObject({ kind: 'replay' });
  });

  it('runs one of ten concurrent requests with one key; the others replay it', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const first = request('race', FP, { during: () => gate });
    const rest = Array.from({ length: 9 }, () => request('race'));
    await new Promise((resolve) => setTimeout(resolve, 50));
    release();

    const outcomes = await Promise.all([first, ...rest]);

    expect(outcomes.filter((o) => o.kind === 'ran')).toHaveLength(1);
    expect(outcomes.filter((o) => o.kind === 'replay')).toHaveLength(9);
    expect(await effects()).toBe(1);
  });

  /** A key a release that committed claims on their own left in progress. */
  async function legacyClaim(lockedFor: number) {
    await dataSource.getRepository(IdempotencyKey).insert({
      organizationId: ORG,
      key: 'old',
      fingerprint: FP,
      state: 'in_progress',
      lockToken: 'b7f1d6a4-0000-4000-8000-000000000000',
      lockedUntil: new Date(now + lockedFor),
      responseStatus: null,
      responseBody: null,
      createdAt: new Date(now),
      completedAt: null,
    });
  }

  it('answers 409 with Retry-After: 1 for a committed claim whose lease is running', async () => {
    await legacyClaim(60_000);
    now += 59_999;

    const busy = await request('old');

    expect(busy).toMatchObject({ kind: 'refused' });
    const { problem } = busy as { problem: ProblemException };
    expect(problem.detail).toBe(
      "Idempotency-Key 'old': the first request with this key is still being processed; retry shortly",
    );
    expect(problem.options.headers).toEqual({ 'Retry-After': '1' });
    expect(await effects()).toBe(0);
  });

  it('never runs a committed claim again once its lease ran out: its outcome is unknown', async () => {
    await legacyClaim(60_000);
    now += 60_001;

    const outcome = await request('old');

    expect(outcome).toMatchObject({ kind: 'refused' });
    const { problem } = outcome as { problem: ProblemException };
    expect(problem.code).toBe('conflict');
    expect(problem.options.errors).toEqual([
      expect.objectContaining({ code: 'idempotency_key_interrupted' }),
    ]);
    expect(problem.options.headers).toBeUndefined();
    expect(await request('old', OTHER_FP)).toMatchObject({ kind: 'refused' });
    expect(await effects()).toBe(0);
  });

  it('purges keys older than 24 hours and keeps the rest', async () => {
    await request('old');
    now += DAY / 2;
    await request('young');
    now += DAY / 2 + 1;

    expect(await service.purgeExpired()).toBe(1);
    const left = await dataSource.getRepository(IdempotencyKey).find();
    expect(left.map((k) => k.key)).toEqual(['young']);
  });

  it('purges every hour on an unref’d timer that stops with the module', async () => {
    const setSpy = jest.spyOn(global, 'setInterval');
    const clearSpy = jest.spyOn(global, 'clearInterval');
    try {
      await request('old');
      now += DAY + 1;
      service.onModuleInit();
      const [tick, interval] = setSpy.mock.calls[0]!;
      const timer = setSpy.mock.results[0]!.value as NodeJS.Timeout;
      expect(interval).toBe(3_600_000);
      expect(timer.hasRef()).toBe(false);

      tick();
      for (let i = 0; i < 100 && (await keyRow('old')); i++) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(await keyRow('old')).toBeNull();

      service.onModuleDestroy();
      expect(clearSpy).toHaveBeenCalledWith(timer);
    } finally {
      setSpy.mockRestore();
      clearSpy.mockRestore();
    }
  });
});

describe(`${IdempotencyService.name}: what a client sees at the edges`, () => {
  const problemOf = (outcome: Outcome) => (outcome as { problem: ProblemException }).problem;

  it('hands a claim for a new key, and for a key past 24 hours', async () => {
    const claimed = await transactions.atomic((manager) => service.begin(manager, ORG, 'k1', FP));
    const claim = {
      organizationId: ORG,
      key: 'k1',
      token: expect.stringMatching(/^[0-9a-f-]{36}$/),
    };
    expect(claimed).toEqual({ kind: 'claimed', claim });
    await transactions.atomic(async (manager) => {
      if (claimed.kind === 'claimed') await service.complete(manager, claimed.claim, 201, {});
    });
    now += DAY + 1;
    const again = await transactions.atomic((manager) => service.begin(manager, ORG, 'k1', FP));
    expect(again).toEqual({ kind: 'claimed', claim });
  });

  it('remembers a key for exactly 24 hours', async () => {
    await request('k1');
    now += DAY;
    expect(await request('k1')).toMatchObject({ kind: 'replay', status: 201 });
    expect(await request('k1', OTHER_FP)).toMatchObject({ kind: 'refused' });
    now += 1;
    expect(await request('k1', OTHER_FP)).toEqual({ kind: 'ran', status: 201 });
  });

  it('replays a response without a body as one without a body', async () => {
    const begun = await transactions.atomic(async (manager) => {
      const claim = await service.begin(manager, ORG, 'empty', FP);
      if (claim.kind === 'claimed') await service.complete(manager, claim.claim, 202, undefined);
      return claim;
    });
    expect(begun.kind).toBe('claimed');
    expect(await service.stored(ORG, 'empty', FP)).toEqual({ kind: 'replay', status: 202 });
    expect(await service.stored(ORG, 'empty', FP)).not.toHaveProperty('body', null);
  });

  // PostgreSQL reads the committed row on a connection of its own; SQLite's one connection may
  // hold another request's uncommitted transaction, so there the replay waits its turn.
  it(`replays a completed key ${ADMIN_URL ? 'without waiting for' : 'once it is its turn after'} another request in flight`, async () => {
    await request('done');
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const inFlight = request('busy', FP, { during: () => gate });
    await new Promise((resolve) => setTimeout(resolve, 20));
    const waited = new Promise((resolve) => setTimeout(() => resolve('waited'), 1000));
    const replaying = request('done');
    const first = await Promise.race([replaying, waited]);
    release();
    await inFlight;
    if (ADMIN_URL) expect(first).toMatchObject({ kind: 'replay', status: 201 });
    else expect(first).toBe('waited');
    expect(await replaying).toMatchObject({ kind: 'replay', status: 201 });
  });

  it('refuses a different request racing the first with one key, never handing it that response', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const first = request('race', FP, { during: () => gate });
    await new Promise((resolve) => setTimeout(resolve, 20));
    const other = request('race', OTHER_FP);
    await new Promise((resolve) => setTimeout(resolve, 20));
    release();

    expect(await first).toEqual({ kind: 'ran', status: 201 });
    const refused = await other;
    expect(refused).toMatchObject({ kind: 'refused' });
    expect(problemOf(refused).options.errors).toEqual([
      expect.objectContaining({ code: 'idempotency_key_reused' }),
    ]);
    expect(await effects()).toBe(1);
  });

  it('undoes the work of a request whose claim was taken from it', async () => {
    await request('k1');
    // A claim the key no longer holds (another request took it over): completing it fails the
    // transaction, and the work done under it is rolled back.
    const stale = { organizationId: ORG, key: 'k1', token: 'c0ffee00-0000-4000-8000-000000000000' };
    const outcome = await transactions
      .atomic(async (manager) => {
        await manager.insert(Organization, {
          id: 'org_work_after_takeover_00000',
          name: 'work',
          plan: 'standard',
          rateLimitPerMinute: null,
          createdAt: new Date(now),
          updatedAt: new Date(now),
        });
        await service.complete(manager, stale, 201, {});
      })
      .catch((error: unknown) => error);
    expect(outcome).toBeInstanceOf(ProblemException);
    expect(outcome).toMatchObject({
      code: 'conflict',
      options: { errors: [expect.objectContaining({ code: 'idempotency_key_in_progress' })] },
    });
    expect(await effects()).toBe(1);
  });

  it('a claim committed without an outcome blocks its key for 60 s, then is reported interrupted', async () => {
    // What a release that committed claims before the work left behind; begin() writes the lease.
    await transactions.atomic((manager) => service.begin(manager, ORG, 'old', FP));
    const start = now;
    for (const after of [59_999, 60_000]) {
      now = start + after;
      const busy = problemOf(await request('old'));
      expect(busy.options.errors).toEqual([
        expect.objectContaining({ code: 'idempotency_key_in_progress' }),
      ]);
    }
    now = start + 60_001;
    const interrupted = problemOf(await request('old'));
    const message =
      'the first request with this key was interrupted and whether it took effect is unknown; check for its result before sending it again with a new key';
    expect(interrupted.detail).toBe(`Idempotency-Key 'old': ${message}`);
    expect(interrupted.options.errors).toEqual([
      { path: 'header.Idempotency-Key', message, code: 'idempotency_key_interrupted' },
    ]);
  });

  it('logs what the hourly purge removed, and a purge that failed, without throwing', async () => {
    const log = jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const setSpy = jest.spyOn(global, 'setInterval');
    try {
      await request('old');
      await request('older');
      now += DAY + 1;
      service.onModuleInit();
      const tick = setSpy.mock.calls[0]![0];
      tick();
      for (let i = 0; i < 100 && log.mock.calls.length === 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(log.mock.calls).toEqual([[{ purged: 2 }, 'purged expired idempotency keys']]);
      expect(log.mock.contexts[0]).toMatchObject({ context: 'Idempotency' });
      // Nothing to purge: nothing logged.
      tick();
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(log).toHaveBeenCalledTimes(1);
      service.onModuleDestroy();

      // The database is gone: the purge says so and the process carries on.
      const gone = new DataSource(dataSource.options);
      await gone.initialize();
      const sql = new Sql(gone);
      const broken = new IdempotencyService(
        gone.getRepository(IdempotencyKey),
        new TransactionRunner(gone, sql),
        sql,
        clock,
      );
      await gone.destroy();
      setSpy.mockClear();
      broken.onModuleInit();
      setSpy.mock.calls[0]![0]();
      // Only the service's own lines: the transaction runner warns too, in its words.
      const own = () =>
        warn.mock.calls.filter((_, i) => warn.mock.contexts[i]?.context === 'Idempotency');
      for (let i = 0; i < 100 && own().length === 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      broken.onModuleDestroy();
      expect(own()).toEqual([
        [
          { err: expect.any(Error) },
          'purging expired idempotency keys failed; retrying in an hour',
        ],
      ]);
    } finally {
      log.mockRestore();
      warn.mockRestore();
      setSpy.mockRestore();
    }
  });
});
