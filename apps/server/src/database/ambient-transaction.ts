import { AsyncLocalStorage } from 'node:async_hooks';
import type { DataSource, EntityManager, QueryRunner } from 'typeorm';

/**
 * The transaction a whole request runs in (`TransactionRunner.atomic`, used for a POST with an
 * `Idempotency-Key`, whose outcome is stored in the same transaction as its effects). While it
 * is open, every database call the request makes joins it: `TransactionRunner.run` as a
 * savepoint, and on PostgreSQL any manager or repository without a query runner of its own
 * borrows this one (`joinAmbientTransactions`), as on SQLite, whose one connection does anyway.
 */
export interface AmbientTransaction {
  readonly manager: EntityManager;
  /** False once the transaction has committed or rolled back: late callbacks do not join it. */
  open: boolean;
  /** Nested `run`s of one request take turns: savepoints on one connection cannot interleave. */
  turn: Promise<unknown>;
  /** What to do once it has committed or rolled back (`TransactionRunner.afterwards`). */
  afterwards: (() => void)[];
}

const storage = new AsyncLocalStorage<AmbientTransaction>();

/** The open request transaction of the current async context, if any. */
export function ambientTransaction(): AmbientTransaction | undefined {
  const ambient = storage.getStore();
  return ambient?.open ? ambient : undefined;
}

/** Runs `work` (and everything it calls) inside `ambient`. */
export function withAmbientTransaction<T>(ambient: AmbientTransaction, work: () => T): T {
  return storage.run(ambient, work);
}

/**
 * Makes the data source hand the open request transaction's query runner to every caller that
 * asks for one inside it (a repository's `findOneBy`, `dataSource.query`): without this, on
 * PostgreSQL such a call would take a second pooled connection, neither see the request's
 * uncommitted rows nor roll back with it, and could wait on a row lock the request itself holds.
 * Released by whoever opened the transaction, not by the borrower.
 */
const joined = new WeakSet<DataSource>();

export function joinAmbientTransactions(dataSource: DataSource): void {
  if (joined.has(dataSource)) return;
  joined.add(dataSource);
  const create = dataSource.createQueryRunner.bind(dataSource);
  const borrowed = new WeakMap<QueryRunner, QueryRunner>();
  dataSource.createQueryRunner = (mode) => {
    const runner = ambientTransaction()?.manager.queryRunner;
    if (!runner) return create(mode);
    let view = borrowed.get(runner);
    if (!view) {
      view = new Proxy(runner, {
        get(target, property) {
          if (property === 'release') return () => Promise.resolve();
          const value = Reflect.get(target, property, target) as unknown;
          return typeof value === 'function' ? (value as () => unknown).bind(target) : value;
        },
      });
      borrowed.set(runner, view);
    }
    return view;
  };
}
