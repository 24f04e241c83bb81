import { DataSource, type EntityManager } from 'typeorm';
import { Sql } from '../database/sql';
import { TransactionRunner } from './transactions';

/**
 * `afterCommit` is how a write announces what others may now read (a new outbox event wakes the
 * webhook dispatcher): the announcement must follow the commit, and never a rollback.
 */
describe('TransactionRunner.afterCommit', () => {
  let dataSource: DataSource;
  let transactions: TransactionRunner;

  beforeAll(async () => {
    dataSource = new DataSource({ type: 'better-sqlite3', database: ':memory:' });
    await dataSource.initialize();
    await dataSource.query('CREATE TABLE notes (text varchar NOT NULL)');
    transactions = new TransactionRunner(dataSource, new Sql(dataSource));
  });

  afterAll(() => dataSource.destroy());

  it('runs a hook after the work, once the transaction committed, before run resolves', async () => {
    const order: string[] = [];
    await transactions.run(async (manager) => {
      await manager.query(`INSERT INTO notes (text) VALUES ('committed')`);
      transactions.afterCommit(manager, () => order.push('hook'));
      order.push('work finished');
    });
    order.push('run resolved');
    expect(order).toEqual(['work finished', 'hook', 'run resolved']);
  });

  it('never runs the hook of a transaction that rolled back', async () => {
    const hook = jest.fn();
    await expect(
      transactions.run(async (manager) => {
        await manager.query(`INSERT INTO notes (text) VALUES ('rolled back')`);
        transactions.afterCommit(manager, hook);
        throw new Error('fails after the write');
      }),
    ).rejects.toThrow('fails after the write');
    expect(hook).not.toHaveBeenCalled();
    expect(await dataSource.query(`SELECT * FROM notes WHERE text = 'rolled back'`)).toEqual([]);
  });

  it('knows a transaction open only until it ends; a hook given its manager later runs at once', async () => {
    let kept: EntityManager | undefined;
    await transactions.run(async (manager) => {
      kept = manager;
      await manager.query(`INSERT INTO notes (text) VALUES ('open')`);
      expect(transactions.isOpen(manager)).toBe(true);
    });
    expect(transactions.isOpen(kept!)).toBe(false);
    const late = jest.fn();
    transactions.afterCommit(kept!, late);
    expect(late).toHaveBeenCalledTimes(1);
    expect(transactions.beforeCommit(kept!, () => Promise.resolve())).toBe(false);
    expect(transactions.isOpen(dataSource.manager)).toBe(false);
  });

  it('runs the hook at once outside a transaction (nothing to wait for)', () => {
    const hook = jest.fn();
    transactions.afterCommit(dataSource.manager, hook);
    expect(hook).toHaveBeenCalledTimes(1);
  });
});

/**
 * Readiness answers 503 while `writeHealth` is `storage_full`. A transaction that only reads
 * commits on a full disk as well (a periodic sweep that finds nothing), so only a transaction
 * that wrote may clear it.
 */
describe('TransactionRunner.writeHealth', () => {
  let dataSource: DataSource;
  let transactions: TransactionRunner;
  const page = 'x'.repeat(3000);

  beforeAll(async () => {
    dataSource = new DataSource({ type: 'better-sqlite3', database: ':memory:' });
    await dataSource.initialize();
    await dataSource.query('CREATE TABLE pages (text varchar NOT NULL)');
    transactions = new TransactionRunner(dataSource, new Sql(dataSource));
  });

  afterAll(() => dataSource.destroy());

  it('stays storage_full through a read-only commit, and clears on the first write that commits', async () => {
    const [row] = await dataSource.query<{ page_count: number }[]>('PRAGMA page_count');
    const pages = row!.page_count;
    await dataSource.query(`PRAGMA max_page_count = ${pages + 2}`);
    const insert = () =>
      transactions.run((manager) => manager.query('INSERT INTO pages (text) VALUES (?)', [page]));
    let refused: unknown;
    for (let i = 0; i < 20 && !refused; i += 1) await insert().catch((e: unknown) => (refused = e));
    expect(String(refused)).toMatch(/full/i);
    expect(transactions.writeHealth.state).toBe('storage_full');

    await transactions.run((manager) => manager.query('SELECT COUNT(*) FROM pages'));
    await transactions.run((manager) => manager.query('DELETE FROM pages WHERE 0'));
    expect(transactions.writeHealth.state).toBe('storage_full');

    await dataSource.query('PRAGMA max_page_count = 1073741823');
    await insert();
    expect(transactions.writeHealth.state).toBe('ok');
  });
});
