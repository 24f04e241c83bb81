import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Column, DataSource, Entity, PrimaryColumn } from 'typeorm';
import { insertRows } from './sql';

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

describe(`${insertRows.name} (SQLite)`, () => {
  let dir: string;
  let dataSource: DataSource;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'insert-rows-'));
    dataSource = new DataSource({
      type: 'better-sqlite3',
      database: path.join(dir, 'db.sqlite'),
      entities: [Amount],
    });
    await dataSource.initialize();
    // This test's own table, written out as a migration would (the app's schema never syncs).
    await dataSource.query(
      'CREATE TABLE amounts (id varchar PRIMARY KEY NOT NULL, cents integer NOT NULL, settled boolean NOT NULL DEFAULT (0))',
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
});
