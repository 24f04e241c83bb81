import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Column, DataSource, Entity, PrimaryColumn } from 'typeorm';
import { emptyDatabase } from '../../test/support/empty-database';
import { insertRows, upsertRows } from './write-rows';

/** Cents in the entity, stored as hundredths of a cent: a transformer that is not idempotent. */
@Entity({ name: 'amounts' })
class Amount {
  @PrimaryColumn({ type: 'varchar' })
  id!: string;

  @Column({
    type: 'integer',
    transformer: { to: (v: number) => v * 100, from: (v: number) => v / 100 },
  })
  cents!: number;

  @Column({ type: 'boolean', default: false })
  settled!: boolean;
}

/** A record owned by an organization, as the batch upsert's resources are. */
@Entity({ name: 'owned' })
class Owned {
  @PrimaryColumn({ type: 'varchar' })
  id!: string;

  @Column({ name: 'organization_id', type: 'varchar' })
  organizationId!: string;

  @Column({ type: 'varchar' })
  name!: string;

  @Column({ type: 'varchar' })
  note!: string;
}

/** A timestamp as the app's entities have them (`timestampColumn`). */
@Entity({ name: 'stamps' })
class Stamp {
  @PrimaryColumn({ type: 'varchar' })
  id!: string;

  @Column({ type: Date, precision: 3 })
  at!: Date;
}

describe(`${insertRows.name} and ${upsertRows.name} (SQLite)`, () => {
  let dir: string;
  let dataSource: DataSource;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'insert-rows-'));
    dataSource = new DataSource({
      type: 'better-sqlite3',
      database: path.join(dir, 'db.sqlite'),
      entities: [Amount, Owned, Stamp],
    });
    await dataSource.initialize();
    // This test's own table, written out as a migration would (the app's schema never syncs).
    await dataSource.query(
      'CREATE TABLE amounts (id varchar PRIMARY KEY NOT NULL, cents integer NOT NULL, settled boolean NOT NULL DEFAULT (0))',
    );
    await dataSource.query(
      'CREATE TABLE stamps (id varchar PRIMARY KEY NOT NULL, at datetime NOT NULL)',
    );
    await dataSource.query(
      'CREATE TABLE owned (id varchar PRIMARY KEY NOT NULL, organization_id varchar NOT NULL, name varchar NOT NULL, note varchar NOT NULL)',
    );
  });
  afterAll(async () => {
    await dataSource.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  it('stores what TypeORM’s insert stores: each column’s transformer applied once', async () => {
    await dataSource.manager.insert(Amount, { id: 'typeorm', cents: 7, settled: true });
    await insertRows(dataSource.manager, Amount, [{ id: 'ours', cents: 7, settled: true }]);

    const stored = await dataSource.query<{ id: string; cents: number; settled: number }[]>(
      'SELECT id, cents, settled FROM amounts ORDER BY id',
    );
    expect(stored).toEqual([
      { id: 'ours', cents: 700, settled: 1 },
      { id: 'typeorm', cents: 700, settled: 1 },
    ]);
    const read = await dataSource.manager.findOneByOrFail(Amount, { id: 'ours' });
    expect(read.cents).toBe(7);
  });

  it('stores each row its own timestamp where rows share one Date and where they do not', async () => {
    const batch = new Date('2026-03-04T05:06:07.089Z');
    const other = new Date('2027-01-02T03:04:05.006Z');
    const dates = [batch, batch, other, batch, new Date(batch.getTime() + 1)];
    await insertRows(
      dataSource.manager,
      Stamp,
      dates.map((at, i) => ({ id: `s${i}`, at })),
    );
    await dataSource.manager.insert(Stamp, { id: 'typeorm', at: other });

    const read = await dataSource.manager.find(Stamp, { order: { id: 'ASC' } });
    expect(read.map((row) => [row.id, row.at.toISOString()])).toEqual([
      ...dates.map((at, i) => [`s${i}`, at.toISOString()]),
      ['typeorm', other.toISOString()],
    ]);
    const stored = await dataSource.query<{ id: string; at: string }[]>(
      `SELECT id, at FROM stamps WHERE id IN ('s2', 'typeorm')`,
    );
    expect(new Set(stored.map((row) => row.at)).size).toBe(1);
  });

  it('upsertRows writes back only the columns named, for every row, in its own organization, and inserts new ones', async () => {
    // More rows than one statement takes (30,000 values, 4 a row), so the chunks are exercised too.
    const rows = Array.from({ length: 7_501 }, (_, i) => ({
      id: `r${i}`,
      organizationId: 'org_a',
      name: `name ${i}`,
      note: 'kept',
    }));
    await insertRows(dataSource.manager, Owned, rows);
    await insertRows(dataSource.manager, Owned, [
      { id: 'theirs', organizationId: 'org_b', name: 'theirs', note: 'theirs' },
    ]);
    const changed = rows.map((row) => ({ ...row, name: `renamed ${row.id}`, note: 'not named' }));
    // A row claiming another organization's id changes nothing there.
    changed.push({ id: 'theirs', organizationId: 'org_a', name: 'stolen', note: 'stolen' });
    const added = { id: 'new', organizationId: 'org_a', name: 'renamed new', note: 'kept' };
    await upsertRows(dataSource.manager, Owned, [...changed, added], ['name']);

    const stored = await dataSource.manager.find(Owned, { order: { id: 'ASC' } });
    expect(stored).toHaveLength(7_503);
    expect(stored.find((row) => row.id === 'new')).toEqual(added);
    expect(stored.find((row) => row.id === 'theirs')).toEqual({
      id: 'theirs',
      organizationId: 'org_b',
      name: 'theirs',
      note: 'theirs',
    });
    const ours = stored.filter((row) => row.organizationId === 'org_a');
    expect(ours.every((row) => row.name === `renamed ${row.id}` && row.note === 'kept')).toBe(true);
  });
});

// PostgreSQL only (CI sets TEST_DATABASE_URL): 250 rows or more go as one array per column.
if (process.env.TEST_DATABASE_URL) {
  describe(`${insertRows.name} on PostgreSQL`, () => {
    let dataSource: DataSource;
    let drop: () => Promise<void>;
    beforeAll(async () => {
      const database = await emptyDatabase();
      drop = database.drop;
      // Sessions in a zone 5.5 hours from this process's, as a server's may be from its database's.
      const kolkata = new Date('2026-03-04T00:00:00Z').getTimezoneOffset() === -330;
      const zone = kolkata ? 'UTC' : 'Asia/Kolkata';
      dataSource = new DataSource({
        type: 'postgres',
        url: database.url,
        entities: [Stamp],
        extra: { options: `-c timezone=${zone}` },
      });
      await dataSource.initialize();
      await dataSource.query(
        'CREATE TABLE stamps (id varchar PRIMARY KEY, at timestamptz(3) NOT NULL)',
      );
    });
    afterAll(async () => {
      await dataSource.destroy();
      await drop();
    });

    it('stores the instant each row gives, whatever the session’s time zone', async () => {
      const at = new Date('2026-03-04T05:06:07.089Z');
      const rows = Array.from({ length: 300 }, (_, i) => ({
        id: `s${i}`,
        at: new Date(at.getTime() + i),
      }));
      await insertRows(dataSource.manager, Stamp, rows);
      await insertRows(dataSource.manager, Stamp, [{ id: 'one', at }]);

      const stored = await dataSource.query<{ id: string; ms: string }[]>(
        'SELECT id, (EXTRACT(EPOCH FROM at) * 1000)::bigint::text AS ms FROM stamps',
      );
      const expected = new Map(
        [...rows, { id: 'one', at }].map((r) => [r.id, String(r.at.getTime())]),
      );
      expect(new Map(stored.map((row) => [row.id, row.ms]))).toEqual(expected);
    });
  });
}
