import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import { type DialectName, Sql } from '../database/sql';

/**
 * Runs a unit of work in one database transaction: the changed rows and their outbox event
 * commit together or not at all.
 *
 * SQLite has a single connection in this process, so transactions are queued here rather than
 * interleaved on it (TypeORM would otherwise try to nest them). PostgreSQL runs them
 * concurrently; code that must serialise on a row takes a row lock (see `lockOwned` in find-owned.ts).
 */
@Injectable()
export class TransactionRunner {
  private queue: Promise<unknown> = Promise.resolve();
  /** What to do once each open transaction commits, by the transaction's manager. */
  private readonly commitHooks = new WeakMap<EntityManager, (() => void)[]>();

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly sql: Sql,
  ) {}

  get dialect(): DialectName {
    return this.sql.dialect;
  }

  /** For reads outside a transaction. */
  get manager(): EntityManager {
    return this.dataSource.manager;
  }

  run<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    const hooks: (() => void)[] = [];
    const transaction = () =>
      this.dataSource.transaction((manager) => {
        this.commitHooks.set(manager, hooks);
        return work(manager);
      });
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
}
