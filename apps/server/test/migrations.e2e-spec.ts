/**
 * Migrations are written once for both databases and registered by the modules that own them.
 * An existing database must not notice: every released migration keeps the name recorded in its
 * `migrations` table (or TypeORM would run it again), and the released migrations still build
 * exactly the schema they built when they were two copies per dialect. The expected schemas in
 * `support/released-schema.*.json` were read from databases migrated by those per-dialect copies
 * (the commit before they were folded), with the same queries as `describeSchema` below.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { DataSource, type MigrationInterface } from 'typeorm';
import { loadConfig } from '../src/config/env';
import { dataSourceOptions } from '../src/database/data-source';
import type { DialectName } from '../src/database/sql';
import { APP_SCHEMA } from '../src/schema';

const ADMIN_URL = process.env.TEST_DATABASE_URL;
const DIALECT: DialectName = ADMIN_URL ? 'postgres' : 'sqlite';

/** The names in the `migrations` table of every database migrated by a released version. */
const RELEASED: Record<DialectName, string[]> = {
  sqlite: [
    'Initial1763800000000',
    'Domain1763900000000',
    'IdempotencyKeys1763900000001',
    'Webhooks1764000000000',
    'OAuth1765000000000',
    'SearchIndex1766000000000',
    'Delegation1766100000000',
    'SqliteAudit1766200000000',
    'Members1766200000001',
  ],
  postgres: [
    'Initial1763800000000',
    'Domain1763900000000',
    'IdempotencyKeys1763900000001',
    'Webhooks1764000000000',
    'OAuth1765000000000',
    'SearchIndex1766000000000',
    'Delegation1766100000000',
    'PostgresAudit1766200000000',
    'Members1766200000001',
  ],
};

interface SchemaDescription {
  tables: Record<string, string[]>;
  indexes: string[];
  constraints: string[];
}

/** Columns (type, NOT NULL, default), index and trigger definitions, and constraints. */
async function describeSchema(db: DataSource): Promise<SchemaDescription> {
  const tables: Record<string, string[]> = {};
  const add = (table: string, column: string) => (tables[table] ??= []).push(column);
  if (DIALECT === 'postgres') {
    const columns = await db.query<
      {
        table_name: string;
        column_name: string;
        data_type: string;
        len: number | null;
        precision: number | null;
        is_nullable: string;
        column_default: string | null;
      }[]
    >(
      `SELECT table_name, column_name, data_type, character_maximum_length AS len,
              datetime_precision AS precision, is_nullable, column_default
       FROM information_schema.columns
       WHERE table_schema = 'public' AND table_name <> 'migrations'
       ORDER BY table_name, ordinal_position`,
    );
    for (const c of columns) {
      const type =
        c.data_type === 'character varying'
          ? `varchar(${c.len})`
          : c.data_type === 'timestamp with time zone'
            ? `timestamptz(${c.precision})`
            : c.data_type;
      add(
        c.table_name,
        `${c.column_name} ${type}${c.is_nullable === 'NO' ? ' not null' : ''}${c.column_default ? ` default ${c.column_default}` : ''}`,
      );
    }
    const indexes = await db.query<{ indexdef: string }[]>(
      `SELECT indexdef FROM pg_indexes
       WHERE schemaname = 'public' AND tablename <> 'migrations' ORDER BY indexname`,
    );
    const constraints = await db.query<{ t: string; def: string }[]>(
      `SELECT conrelid::regclass::text AS t, pg_get_constraintdef(oid) AS def FROM pg_constraint
       WHERE connamespace = 'public'::regnamespace AND contype IN ('c', 'f', 'u') ORDER BY 1, 2`,
    );
    return {
      tables,
      indexes: indexes.map((r) => r.indexdef.replace(' public.', ' ')),
      constraints: constraints.map((r) => `${r.t}: ${r.def}`),
    };
  }
  const columns = await db.query<
    { table_name: string; name: string; type: string; required: number; dflt: string | null }[]
  >(
    `SELECT m.name AS table_name, p.name, p.type, p."notnull" AS required, p.dflt_value AS dflt
     FROM sqlite_master m JOIN pragma_table_info(m.name) p
     WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%' AND m.name <> 'migrations'
     ORDER BY m.name, p.cid`,
  );
  for (const c of columns) {
    add(
      c.table_name,
      `${c.name} ${c.type}${c.required ? ' not null' : ''}${c.dflt !== null ? ` default ${c.dflt}` : ''}`,
    );
  }
  const indexes = await db.query<{ sql: string }[]>(
    `SELECT sql FROM sqlite_master
     WHERE type IN ('index', 'trigger') AND sql IS NOT NULL ORDER BY name`,
  );
  const keys = await db.query<{ t: string; ref: string; col: string; del: string }[]>(
    `SELECT m.name AS t, f."table" AS ref, f."from" AS col, f.on_delete AS del
     FROM sqlite_master m JOIN pragma_foreign_key_list(m.name) f
     WHERE m.type = 'table' ORDER BY 1, 3`,
  );
  return {
    tables,
    indexes: indexes.map((r) => r.sql.replace(/\s+/g, ' ')),
    constraints: keys.map((r) => `${r.t}.${r.col} -> ${r.ref} on delete ${r.del}`),
  };
}

/** The SQLite table definitions, which the describe above reads only as columns. */
async function sqliteTableText(db: DataSource): Promise<string[]> {
  const rows = await db.query<{ sql: string }[]>(
    `SELECT sql FROM sqlite_master WHERE type = 'table' AND name <> 'migrations' ORDER BY name`,
  );
  return rows.map((r) => r.sql.replace(/\s+/g, ' '));
}

let databaseUrl: string;
let drop: () => Promise<void>;

beforeAll(async () => {
  if (ADMIN_URL) {
    const name = `platform_migrations_${randomBytes(6).toString('hex')}`;
    const admin = new Client({ connectionString: ADMIN_URL });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.end();
    const url = new URL(ADMIN_URL);
    url.pathname = `/${name}`;
    databaseUrl = url.toString();
    drop = async () => {
      const client = new Client({ connectionString: ADMIN_URL });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    };
  } else {
    const dir = mkdtempSync(path.join(tmpdir(), 'migrations-'));
    databaseUrl = `sqlite:${path.join(dir, 'db.sqlite')}`;
    drop = () => Promise.resolve(rmSync(dir, { recursive: true, force: true }));
  }
});

afterAll(async () => {
  await drop?.();
});

function migrationNames(options: ReturnType<typeof dataSourceOptions>): string[] {
  return (options.migrations as (new () => MigrationInterface)[]).map(
    (Migration) => new Migration().name!,
  );
}

it('keeps every released migration under the name existing databases recorded, in order', () => {
  const options = dataSourceOptions(loadConfig({ DATABASE_URL: databaseUrl }).database, APP_SCHEMA);
  expect(migrationNames(options).slice(0, RELEASED[DIALECT].length)).toEqual(RELEASED[DIALECT]);
});

it('builds the released schema, and every down undoes its migration', async () => {
  const options = dataSourceOptions(loadConfig({ DATABASE_URL: databaseUrl }).database, APP_SCHEMA);
  // Only the released migrations: one added later changes the schema on purpose.
  const released = (options.migrations as (new () => MigrationInterface)[]).filter((Migration) =>
    RELEASED[DIALECT].includes(new Migration().name!),
  );
  const db = new DataSource({ ...options, migrations: released });
  await db.initialize();
  try {
    const ran = await db.runMigrations({ transaction: 'each' });
    expect(ran.map((m) => m.name)).toEqual(RELEASED[DIALECT]);
    expect(await db.showMigrations()).toBe(false);

    const expected = JSON.parse(
      readFileSync(path.join(__dirname, `support/released-schema.${DIALECT}.json`), 'utf8'),
    ) as SchemaDescription;
    expect(await describeSchema(db)).toEqual(expected);
    if (DIALECT === 'sqlite') {
      // The column types each dialect spells its own way, as the per-dialect copies wrote them.
      const text = (await sqliteTableText(db)).join('\n');
      expect(text).toContain('amount integer NOT NULL CHECK (amount > 0)');
      expect(text).toContain('max_score real NOT NULL');
      expect(text).toContain('fanout_pending boolean NOT NULL DEFAULT 0');
      expect(text).not.toMatch(/timestamptz|bigint|double precision/);
    }

    for (let i = 0; i < RELEASED[DIALECT].length; i += 1) await db.undoLastMigration();
    const left = await describeSchema(db);
    expect(left).toEqual({ tables: {}, indexes: [], constraints: [] });
  } finally {
    await db.destroy();
  }
});

it('undoes every migration after the released ones back to the released schema', async () => {
  const options = dataSourceOptions(loadConfig({ DATABASE_URL: databaseUrl }).database, APP_SCHEMA);
  const db = new DataSource(options);
  await db.initialize();
  try {
    const ran = await db.runMigrations({ transaction: 'each' });
    const later = ran.length - RELEASED[DIALECT].length;
    for (let i = 0; i < later; i += 1) await db.undoLastMigration();
    const expected = JSON.parse(
      readFileSync(path.join(__dirname, `support/released-schema.${DIALECT}.json`), 'utf8'),
    ) as SchemaDescription;
    expect(await describeSchema(db)).toEqual(expected);
    if (DIALECT === 'postgres') {
      // Triggers and functions (not an extension's), which the description above does not list.
      const left = await db.query<{ name: string }[]>(
        `SELECT tgname AS name FROM pg_trigger WHERE NOT tgisinternal
         UNION ALL SELECT proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
         WHERE n.nspname = 'public'
           AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.objid = p.oid AND d.deptype = 'e')`,
      );
      expect(left).toEqual([]);
    }
  } finally {
    await db.destroy();
  }
});

it('numbers the events already there per organization in the order they were written', async () => {
  const options = dataSourceOptions(loadConfig({ DATABASE_URL: databaseUrl }).database, APP_SCHEMA);
  const all = options.migrations as (new () => MigrationInterface)[];
  const feed = all.findIndex((Migration) => new Migration().name === 'ChangeFeed1767033000000');
  expect(feed).toBeGreaterThan(0);
  const before = new DataSource({ ...options, migrations: all.slice(0, feed) });
  await before.initialize();
  const p = (n: number) => (DIALECT === 'postgres' ? `$${n}` : '?');
  const at = (ms: number) => {
    const date = new Date(Date.UTC(2026, 10, 1) + ms);
    return DIALECT === 'postgres' ? date : date.toISOString().replace('T', ' ').replace('Z', '');
  };
  try {
    await before.runMigrations({ transaction: 'each' });
    for (const org of ['org_A', 'org_B'])
      await before.query(
        `INSERT INTO organizations (id, name, plan, created_at, updated_at) VALUES (${p(1)}, ${p(2)}, 'standard', ${p(3)}, ${p(4)})`,
        [org, org, at(0), at(0)],
      );
    // Written out of id order, a ping among them, two organizations interleaved, a tie on time.
    const events: [string, string, string, number][] = [
      ['evt_3', 'org_A', 'student.created', 30],
      ['evt_1', 'org_B', 'course.created', 10],
      ['evt_2', 'org_A', 'ping', 20],
      ['evt_5', 'org_A', 'student.updated', 40],
      ['evt_4', 'org_A', 'student.deleted', 40],
      ['evt_6', 'org_B', 'course.deleted', 50],
    ];
    for (const [id, org, type, ms] of events)
      await before.query(
        `INSERT INTO events (id, organization_id, type, api_version, data, created_at) VALUES (${p(1)}, ${p(2)}, ${p(3)}, 'v1', '{}', ${p(4)})`,
        [id, org, type, at(ms)],
      );
  } finally {
    await before.destroy();
  }
  const db = new DataSource(options);
  await db.initialize();
  try {
    const ran = await db.runMigrations({ transaction: 'each' });
    expect(ran.map((m) => m.name)).toContain('ChangeFeed1767033000000');
    const rows = await db.query<{ id: string; position: string | number | null }[]>(
      'SELECT id, position FROM events ORDER BY id',
    );
    expect(rows.map((r) => [r.id, r.position === null ? null : Number(r.position)])).toEqual([
      ['evt_1', 1],
      ['evt_2', null],
      ['evt_3', 1],
      ['evt_4', 2],
      ['evt_5', 3],
      ['evt_6', 2],
    ]);
    const heads = await db.query<{ organization_id: string; position: string | number }[]>(
      'SELECT organization_id, position FROM feed_heads ORDER BY organization_id',
    );
    expect(heads.map((h) => [h.organization_id, Number(h.position)])).toEqual([
      ['org_A', 3],
      ['org_B', 2],
    ]);
    for (let i = 0; i < ran.length; i += 1) await db.undoLastMigration();
  } finally {
    await db.destroy();
  }
});

it('starts the delivery chain of each endpoint already there at its organization’s head', async () => {
  const options = dataSourceOptions(loadConfig({ DATABASE_URL: databaseUrl }).database, APP_SCHEMA);
  const all = options.migrations as (new () => MigrationInterface)[];
  const chain = all.findIndex((Migration) => new Migration().name === 'DeliveryChain1767213000000');
  expect(chain).toBeGreaterThan(0);
  const p = (n: number) => (DIALECT === 'postgres' ? `$${n}` : '?');
  const now = DIALECT === 'postgres' ? new Date() : new Date().toISOString().replace('T', ' ');
  const before = new DataSource({ ...options, migrations: all.slice(0, chain) });
  await before.initialize();
  try {
    await before.runMigrations({ transaction: 'each' });
    for (const org of ['org_D', 'org_E'])
      await before.query(
        `INSERT INTO organizations (id, name, plan, created_at, updated_at) VALUES (${p(1)}, ${p(2)}, 'standard', ${p(3)}, ${p(4)})`,
        [org, org, now, now],
      );
    // org_D has written 7 changes; org_E none (it has no head row). The test before left its
    // organizations behind, so these are others.
    await before.query(`INSERT INTO feed_heads (organization_id, position) VALUES ('org_D', 7)`);
    for (const [id, org] of [
      ['we_D', 'org_D'],
      ['we_E', 'org_E'],
    ])
      await before.query(
        `INSERT INTO webhook_endpoints (id, organization_id, url, events, enabled, secret, created_at, updated_at)
         VALUES (${p(1)}, ${p(2)}, 'https://example.test/hook', '["*"]', ${DIALECT === 'postgres' ? 'true' : '1'}, 'sealed', ${p(3)}, ${p(4)})`,
        [id, org, now, now],
      );
  } finally {
    await before.destroy();
  }
  const db = new DataSource(options);
  await db.initialize();
  try {
    const ran = await db.runMigrations({ transaction: 'each' });
    expect(ran.map((m) => m.name)).toContain('DeliveryChain1767213000000');
    const rows = await db.query<{ id: string; chain_start: string | number }[]>(
      'SELECT id, chain_start FROM webhook_endpoints ORDER BY id',
    );
    expect(rows.map((r) => [r.id, Number(r.chain_start)])).toEqual([
      ['we_D', 7],
      ['we_E', 0],
    ]);
    for (let i = 0; i < all.length; i += 1) await db.undoLastMigration();
  } finally {
    await db.destroy();
  }
});

/**
 * A database migrated to just before the accounts split with two users there (one mid-way
 * through an email change), then migrated to the end.
 */
async function migratedThroughAccounts() {
  const options = dataSourceOptions(loadConfig({ DATABASE_URL: databaseUrl }).database, APP_SCHEMA);
  const all = options.migrations as (new () => MigrationInterface)[];
  const split = all.findIndex((Migration) => new Migration().name === 'Accounts1769500000000');
  expect(split).toBeGreaterThan(0);
  const p = (n: number) => (DIALECT === 'postgres' ? `$${n}` : '?');
  const now = DIALECT === 'postgres' ? new Date() : new Date().toISOString().replace('T', ' ');
  const before = new DataSource({ ...options, migrations: all.slice(0, split) });
  await before.initialize();
  try {
    await before.runMigrations({ transaction: 'each' });
    for (const org of ['org_F', 'org_G'])
      await before.query(
        `INSERT INTO organizations (id, name, plan, created_at, updated_at) VALUES (${p(1)}, ${p(2)}, 'standard', ${p(3)}, ${p(4)})`,
        [org, org, now, now],
      );
    await before.query(
      `INSERT INTO users (id, organization_id, email, password_hash, role, pending_email, email_change_hash, created_at, updated_at)
       VALUES ('usr_01F', 'org_F', 'ada@harbour.example', 'hash-ada', 'developer', 'ada@new.example', 'change-ada', ${p(1)}, ${p(2)}),
              ('usr_01G', 'org_G', 'bo@harbour.example', 'hash-bo', 'admin', NULL, NULL, ${p(3)}, ${p(4)})`,
      [now, now, now, now],
    );
  } finally {
    await before.destroy();
  }
  const db = new DataSource(options);
  await db.initialize();
  await db.runMigrations({ transaction: 'each' });
  /** Undoes the split and every migration after it, and with `everything` the ones before. */
  const undo = async (everything = false) => {
    const count = everything ? all.length : all.length - split;
    for (let i = 0; i < count; i += 1) await db.undoLastMigration();
  };
  return { db, p, now, undo };
}

const ADA = {
  email: 'ada@harbour.example',
  password_hash: 'hash-ada',
  pending_email: 'ada@new.example',
  email_change_hash: 'change-ada',
};
const BO = {
  email: 'bo@harbour.example',
  password_hash: 'hash-bo',
  pending_email: null,
  email_change_hash: null,
};

it('gives every user there an account of their own with the same ULID', async () => {
  const { db, undo } = await migratedThroughAccounts();
  try {
    // The person moved to the account; the user (the membership) kept its id, so the tokens,
    // grants and sessions that name it act as before.
    expect(
      await db.query(
        `SELECT id, email, password_hash, pending_email, email_change_hash FROM accounts
         WHERE id IN ('acc_01F', 'acc_01G') ORDER BY id`,
      ),
    ).toEqual([
      { id: 'acc_01F', ...ADA },
      { id: 'acc_01G', ...BO },
    ]);
    expect(
      await db.query(
        `SELECT id, account_id, organization_id, role FROM users WHERE id IN ('usr_01F', 'usr_01G') ORDER BY id`,
      ),
    ).toEqual([
      { id: 'usr_01F', account_id: 'acc_01F', organization_id: 'org_F', role: 'developer' },
      { id: 'usr_01G', account_id: 'acc_01G', organization_id: 'org_G', role: 'admin' },
    ]);
    await undo(true);
  } finally {
    await db.destroy();
  }
});

it("undoes the split to each account's oldest user, with the person's columns back", async () => {
  const { db, p, now, undo } = await migratedThroughAccounts();
  try {
    // Ada joins org_G too: not restorable as a person of its own.
    await db.query(
      `INSERT INTO users (id, organization_id, account_id, email, password_hash, role, created_at, updated_at)
       VALUES ('usr_02F', 'org_G', 'acc_01F', 'ada@harbour.example', 'hash-ada', 'viewer', ${p(1)}, ${p(2)})`,
      [now, now],
    );
    await undo();
    expect(
      await db.query(
        `SELECT id, email, password_hash, pending_email, email_change_hash FROM users
         WHERE id IN ('usr_01F', 'usr_02F', 'usr_01G') ORDER BY id`,
      ),
    ).toEqual([
      { id: 'usr_01F', ...ADA },
      { id: 'usr_01G', ...BO },
    ]);
    await undo(true);
  } finally {
    await db.destroy();
  }
});
