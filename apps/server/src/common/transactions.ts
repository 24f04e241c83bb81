import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import {
  type AmbientTransaction,
  ambientTransaction,
  joinAmbientTransactions,
  withAmbientTransaction,
} from '../database/ambient-transaction';
import { DatabaseUnavailableError, isStorageFull } from '../database/database-errors';
import { type DialectName, Sql } from '../database/sql';

/** What readiness reports of the database's write path (see `TransactionRunner.writeHealth`). */
export type WriteHealth =
  | { state: 'ok' }
  | { state: 'storage_full'; since: Date }
  | { state: 'broken'; since: Date; error: string };

/**
 * Runs a unit of work in one database transaction: the changed rows and their outbox event
 * commit together or not at all.
 *
 * SQLite has a single connection in this process, so transactions are queued here rather than
 * interleaved on it (TypeORM would otherwise try to nest them). PostgreSQL runs them
 * concurrently; code that must serialise on a row takes a row lock (see `lockOwned` in find-owned.ts).
 *
 * After a transaction fails on SQLite, the connection is put back to "no transaction open"
 * before the next one starts: a COMMIT or ROLLBACK that failed (a full disk) can leave SQLite's
 * transaction and TypeORM's idea of it apart, and every later write would then run inside a
 * transaction that never commits, acknowledged and then lost on restart.
 */
@Injectable()
export class TransactionRunner {
  private readonly logger = new Logger('Transactions');
  private queue: Promise<unknown> = Promise.resolve();
  /** What to do once each open transaction commits, by the transaction's manager. */
  private readonly commitHooks = new WeakMap<EntityManager, (() => void)[]>();
  /** What to do last inside each open transaction, just before its COMMIT, by its manager. */
  private readonly preCommitHooks = new WeakMap<EntityManager, (() => Promise<void>)[]>();
  private health: WriteHealth = { state: 'ok' };

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly sql: Sql,
  ) {
    if (sql.dialect === 'postgres') joinAmbientTransactions(dataSource);
  }

  get dialect(): DialectName {
    return this.sql.dialect;
  }

  /** For reads outside a transaction (inside a request transaction: that transaction's). */
  get manager(): EntityManager {
    return ambientTransaction()?.manager ?? this.dataSource.manager;
  }

  /**
   * Whether writes can commit: `storage_full` from a write refused for lack of space until a
   * transaction that wrote commits again (one that only read proves nothing), `broken` while SQLite's connection could not be reset after a failure.
   */
  get writeHealth(): WriteHealth {
    return this.health;
  }

  /** SQLite: the connection's count of changed rows so far; PostgreSQL: nothing to count. */
  private async changesSoFar(manager: EntityManager): Promise<number> {
    if (this.dialect === 'postgres') return 0;
    const [row] = await manager.query<{ n: number }[]>('SELECT total_changes() AS n');
    return Number(row?.n ?? 0);
  }

  /** Whether the open transaction has written: SQLite by its changed rows, PostgreSQL by its xid. */
  private async wroteSince(manager: EntityManager, changesBefore: number): Promise<boolean> {
    if (this.dialect === 'postgres') {
      const [row] = await manager.query<{ wrote: boolean }[]>(
        'SELECT txid_current_if_assigned() IS NOT NULL AS wrote',
      );
      return row?.wrote === true;
    }
    return (await this.changesSoFar(manager)) > changesBefore;
  }

  run<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    const ambient = ambientTransaction();
    if (ambient) return this.joined(ambient, work);
    const hooks: (() => void)[] = [];
    const preCommit: (() => Promise<void>)[] = [];
    const transaction = async () => {
      if (this.dialect === 'sqlite' && !this.resetSqlite()) {
        throw new DatabaseUnavailableError('the database connection could not be reset');
      }
      try {
        let wrote = false;
        const value = await this.dataSource.transaction(async (manager) => {
          this.commitHooks.set(manager, hooks);
          this.preCommitHooks.set(manager, preCommit);
          try {
            // Only while storage is full: whether this transaction writes, read before its COMMIT.
            const changesBefore =
              this.health.state === 'storage_full' ? await this.changesSoFar(manager) : undefined;
            const done = await work(manager);
            for (const hook of preCommit.splice(0)) await hook();
            if (changesBefore !== undefined) wrote = await this.wroteSince(manager, changesBefore);
            return done;
          } finally {
            // Ended: `isOpen` says so, and a commit hook registered from now on runs at once.
            this.commitHooks.delete(manager);
            this.preCommitHooks.delete(manager);
          }
        });
        // A transaction that only read commits on a full disk too: only a write that committed
        // shows the space is back (a periodic job's empty sweep must not clear readiness's 503).
        if (wrote && this.health.state === 'storage_full') this.health = { state: 'ok' };
        return value;
      } catch (error) {
        if (this.dialect === 'sqlite') this.resetSqlite();
        if (isStorageFull(error) && this.health.state === 'ok') {
          this.health = { state: 'storage_full', since: new Date() };
        }
        throw error;
      }
    };
    let result: Promise<T>;
    if (this.dialect === 'postgres') {
      result = transaction();
    } else {
      result = this.queue.then(transaction);
      this.queue = result.catch(() => undefined);
    }
    return result.then((value) => {
      for (const hook of hooks) hook();
      return value;
    });
  }

  /**
   * Runs `work` and every database call it makes, directly or through `run`, in one
   * transaction: all of it commits, or none. For a request whose record of its own outcome must
   * commit with its effects (an `Idempotency-Key`). Hooks registered inside run after the one
   * commit.
   */
  atomic<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    if (ambientTransaction()) throw new Error('atomic() does not nest');
    const afterwards: (() => void)[] = [];
    return this.run(async (manager) => {
      const ambient: AmbientTransaction = {
        manager,
        open: true,
        turn: Promise.resolve(),
        afterwards,
      };
      try {
        return await withAmbientTransaction(ambient, () => work(manager));
      } finally {
        ambient.open = false;
      }
    }).finally(() => {
      for (const hook of afterwards) hook();
    });
  }

  /**
   * Runs `write` in a transaction of its own once the request's transaction has ended, however
   * it ended (at once outside one): for what must be kept even when the request fails, such as
   * the audit entry of a refused password check, which the request's rollback would undo.
   */
  afterwards(write: (manager: EntityManager) => Promise<void>): Promise<void> {
    const ambient = ambientTransaction();
    if (!ambient) return this.run(write);
    // Not awaited by the request: its transaction ends only after the request's work does.
    ambient.afterwards.push(() => {
      this.run(write).catch((error: unknown) =>
        this.logger.error({ error: (error as Error).message }, 'a deferred write failed'),
      );
    });
    return Promise.resolve();
  }

  /**
   * Calls `hook` once the transaction of `manager` has committed, never if it rolls back: what
   * a write makes visible to others (an outbox event, a delivery due now) is announced only once
   * they can read it. Outside a transaction run here there is nothing to wait for, so it runs at
   * once. Hooks must not throw.
   */
  afterCommit(manager: EntityManager, hook: () => void): void {
    const hooks = this.commitHooks.get(manager);
    if (hooks) hooks.push(hook);
    else hook();
  }

  /** Whether `manager` is a transaction run here that has not ended yet. */
  isOpen(manager: EntityManager): boolean {
    return this.preCommitHooks.has(manager);
  }

  /**
   * Runs `hook` as the last work of the transaction of `manager`, after everything the caller
   * does in it and just before COMMIT (once per registration): for a lock that should be held as
   * briefly as possible (the change feed's per-organization position counter). False, and nothing
   * registered, when `manager` is not a transaction run here.
   */
  beforeCommit(manager: EntityManager, hook: () => Promise<void>): boolean {
    const hooks = this.preCommitHooks.get(manager);
    if (!hooks) return false;
    hooks.push(hook);
    return true;
  }

  /**
   * A `run` inside an open request transaction: a savepoint on its connection, so a failure
   * inside undoes only its own part (the caller may still answer, e.g. a 409). Its commit hooks
   * join the request transaction's (same manager), and wait for that transaction's commit.
   */
  private joined<T>(ambient: AmbientTransaction, work: (manager: EntityManager) => Promise<T>) {
    const result = ambient.turn.then(() =>
      ambient.manager.transaction(() => work(ambient.manager)),
    );
    ambient.turn = result.catch(() => undefined);
    return result;
  }

  /**
   * Puts SQLite's one connection back to "no transaction open", in SQLite and in TypeORM's
   * query runner, when they say otherwise outside any transaction of ours (after a failed
   * COMMIT or ROLLBACK). A connection that cannot be reset is reported by readiness and tried
   * again before the next transaction; writes fail meanwhile rather than pile up uncommitted.
   * False when it could not be reset.
   */
  private resetSqlite(): boolean {
    const db = this.sql.sqliteDatabase();
    const runner = this.sql.sqliteQueryRunner();
    if (!db.inTransaction && !runner.isTransactionActive) {
      if (this.health.state === 'broken') this.health = { state: 'ok' };
      return true;
    }
    try {
      if (db.inTransaction) db.exec('ROLLBACK');
      runner.isTransactionActive = false;
      runner.transactionDepth = 0;
      this.logger.warn('reset the database connection after a failed transaction');
      if (this.health.state === 'broken') this.health = { state: 'ok' };
      return true;
    } catch (error) {
      const message = (error as Error).message;
      if (this.health.state !== 'broken') {
        this.health = { state: 'broken', since: new Date(), error: message };
      }
      this.logger.error({ error: message }, 'could not reset the database connection');
      return false;
    }
  }
}
