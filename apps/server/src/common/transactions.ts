import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';

/**
 * Runs a unit of work in one database transaction: the changed rows and their outbox event
 * commit together or not at all.
 *
 * SQLite has a single connection in this process, so transactions are queued here rather than
 * interleaved on it (TypeORM would otherwise try to nest them). PostgreSQL runs them
 * concurrently; code that must serialise on a row takes a row lock (see `lockForUpdate`).
 */
@Injectable()
export class TransactionRunner {
  private queue: Promise<unknown> = Promise.resolve();
  private readonly commitListeners: (() => void)[] = [];

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  get dialect(): 'sqlite' | 'postgres' {
    return this.dataSource.options.type === 'postgres' ? 'postgres' : 'sqlite';
  }

  /** `notify: false` keeps commit listeners out of it (the dispatcher's own bookkeeping). */
  /** For reads outside a transaction. */
  get manager(): EntityManager {
    return this.dataSource.manager;
  }

  run<T>(
    work: (manager: EntityManager) => Promise<T>,
    options: { notify?: boolean } = {},
  ): Promise<T> {
    let result: Promise<T>;
    if (this.dialect === 'postgres') {
      result = this.dataSource.transaction(work);
    } else {
      result = this.queue.then(() => this.dataSource.transaction(work));
      this.queue = result.catch(() => undefined);
    }
    return this.commitListeners.length && options.notify !== false
      ? result.then((value) => this.committed(value))
      : result;
  }

  /**
   * Calls `listener` after every committed transaction (the webhook dispatcher uses it to pick
   * up a new outbox event at once rather than on its next poll). Listeners must not throw.
   */
  onCommit(listener: () => void): void {
    this.commitListeners.push(listener);
  }

  private committed<T>(value: T): T {
    for (const listener of this.commitListeners) listener();
    return value;
  }

  /**
   * Locks a row of the organization until the transaction ends (PostgreSQL `FOR UPDATE`); a row
   * of another organization is never locked, so no caller can stall or probe another's writes.
   * On SQLite the queue above already serialises writers, so there is nothing to do.
   */
  async lockForUpdate(
    manager: EntityManager,
    table: string,
    id: string,
    organizationId: string,
  ): Promise<void> {
    if (this.dialect === 'postgres') {
      await manager.query(
        `SELECT 1 FROM "${table}" WHERE "id" = $1 AND "organization_id" = $2 FOR UPDATE`,
        [id, organizationId],
      );
    }
  }
}
