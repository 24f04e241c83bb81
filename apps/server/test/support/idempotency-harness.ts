/**
 * The harness of the idempotency service's specs (src/idempotency/idempotency.service.spec.ts and
 * idempotency-edges.spec.ts): a fresh SQLite file, or a fresh PostgreSQL database when
 * TEST_DATABASE_URL is set, with just the tables it needs, and requests run as the interceptor
 * runs them. `setUpIdempotency()` opens it for the file that calls it.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { DataSource, type DataSourceOptions } from 'typeorm';
import { Clock } from '../../src/common/clock';
import { ProblemException } from '../../src/common/problem.exception';
import { TransactionRunner } from '../../src/common/transactions';
import { migrationClasses } from '../../src/database/migration';
import { Sql } from '../../src/database/sql';
import { IdempotencyKey } from '../../src/idempotency/idempotency-key.entity';
import { IdempotencyService } from '../../src/idempotency/idempotency.service';
import { idempotencyKeysMigration } from '../../src/idempotency/migrations/1763900000001-idempotency-keys';
import { initialMigration } from '../../src/migrations/1763800000000-initial';
import { sandboxesMigration } from '../../src/sandboxes/migrations/1769300000000-sandboxes';
import { Organization } from '../../src/organizations/organization.entity';

/** Where PostgreSQL runs, when the tests run on it. */
export const ADMIN_URL = process.env.TEST_DATABASE_URL;
export const ORG = 'org_01JC0IDEMP0TENCY00000000001';
export const OTHER_ORG = 'org_01JC0IDEMP0TENCY00000000002';
export const FP = 'a'.repeat(64);
export const OTHER_FP = 'b'.repeat(64);

let dataSource: DataSource;
let cleanup: () => Promise<void>;
let service: IdempotencyService;
let transactions: TransactionRunner;
let now: number;
/** The current test's database, service and transaction runner, and the clock's time to move. */
export const idem = {
  get dataSource() {
    return dataSource;
  },
  get service() {
    return service;
  },
  get transactions() {
    return transactions;
  },
  get now() {
    return now;
  },
  set now(value: number) {
    now = value;
  },
};
/** The service's injected clock, reading `now`: tests move it to expire keys and leases. */
export const clock = new (class extends Clock {
  override nowMs(): number {
    return now;
  }
})();

async function openDatabase(): Promise<{ options: DataSourceOptions; drop(): Promise<void> }> {
  const entities = [Organization, IdempotencyKey];
  // The organizations table as its entity has it (its sandbox columns too).
  const migrations = [initialMigration, idempotencyKeysMigration, sandboxesMigration];
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

/** Opens the database before the file's tests, and starts each test from no keys at a fixed time. */
export function setUpIdempotency() {
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
}

export const HOUR = 60 * 60 * 1000;
export const DAY = 24 * HOUR;
let workDone = 0;

export type Outcome =
  | { kind: 'ran'; status: number }
  | { kind: 'replay'; status: number; body: unknown }
  | { kind: 'refused'; problem: ProblemException };

/**
 * One request with `key`, as the interceptor runs it: claim, then `work` (which writes an
 * organization row, the request's effect, and answers a status), then the stored response, all
 * in one transaction. `fail` throws after the work and before the commit.
 */
export async function request(
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
export async function effects(): Promise<number> {
  return dataSource.getRepository(Organization).countBy({ name: 'work' });
}

/** The stored key row of `key` in ORG. */
export function keyRow(key: string) {
  return dataSource.getRepository(IdempotencyKey).findOneBy({ organizationId: ORG, key });
}
