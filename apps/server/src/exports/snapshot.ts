import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import Database from 'better-sqlite3';
import Cursor from 'pg-cursor';
import type { DataSource, EntityManager, QueryRunner } from 'typeorm';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/env';
import { Sql, type SqlParams } from '../database/sql';

/**
 * Rows fetched per round trip (PostgreSQL) or per turn of the event loop (SQLite). Small: the
 * server's resident set grew by 86 MB during an export of a million students with batches of
 * 5,000 rows and by 33 MB with batches of 500, at the same throughput (bench/export.bench.js).
 */
export const SNAPSHOT_BATCH_ROWS = 500;

/** One consistent, read-only view of the database: every read inside sees the same commit. */
export interface Snapshot {
  /** For reads through TypeORM-style `manager.query` (the feed's head). */
  readonly manager: EntityManager;
  /** The rows of a statement (named parameters), in batches, with bounded memory. */
  batches(text: string, params?: SqlParams): AsyncIterable<Record<string, unknown>[]>;
}

/**
 * Opens snapshots. PostgreSQL: a REPEATABLE READ READ ONLY transaction on a connection of its
 * own, read through a server-side cursor (pg-cursor). SQLite: a read-only connection of its own in
 * a read transaction (WAL keeps its view while the server writes). Not the server's own SQLite
 * connection: inside an open request transaction it would see that transaction's uncommitted rows.
 */
@Injectable()
export class SnapshotOpener implements OnModuleDestroy {
  private sqlite: Database.Database | undefined;
  /** One snapshot at a time on the SQLite reader connection. */
  private sqliteTurn: Promise<unknown> = Promise.resolve();

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly sql: Sql,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  run<T>(work: (snapshot: Snapshot) => Promise<T>): Promise<T> {
    if (this.sql.dialect === 'postgres') return this.postgres(work);
    const result = this.sqliteTurn.then(() => this.sqliteSnapshot(work));
    this.sqliteTurn = result.catch(() => undefined);
    return result;
  }

  onModuleDestroy(): void {
    this.sqlite?.close();
    this.sqlite = undefined;
  }

  private async postgres<T>(work: (snapshot: Snapshot) => Promise<T>): Promise<T> {
    const runner: QueryRunner = this.dataSource.createQueryRunner();
    const client = (await runner.connect()) as {
      query<R>(cursor: Cursor<R>): Cursor<R>;
    };
    try {
      await runner.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      const sql = this.sql;
      const snapshot: Snapshot = {
        manager: runner.manager,
        async *batches(text, params) {
          const compiled = sql.compile(text, params);
          const cursor = client.query(
            new Cursor<Record<string, unknown>>(compiled.text, compiled.values),
          );
          // The next batch is asked for before this one is handed over: PostgreSQL reads and
          // sends it while the export formats and writes this one.
          let next: Promise<Record<string, unknown>[]> | undefined =
            cursor.read(SNAPSHOT_BATCH_ROWS);
          try {
            for (;;) {
              const rows = await next;
              next = undefined;
              if (rows.length === 0) return;
              next = cursor.read(SNAPSHOT_BATCH_ROWS);
              yield rows;
            }
          } finally {
            await next?.catch(() => undefined);
            await cursor.close();
          }
        },
      };
      try {
        return await work(snapshot);
      } finally {
        await runner.query('ROLLBACK');
      }
    } finally {
      await runner.release();
    }
  }

  private async sqliteSnapshot<T>(work: (snapshot: Snapshot) => Promise<T>): Promise<T> {
    const db = this.sqliteReader();
    const bind = (values: unknown[]) => values.map((v) => (typeof v === 'boolean' ? Number(v) : v));
    const sql = this.sql;
    // A read transaction starts at its first read; the snapshot is taken by that read.
    db.exec('BEGIN');
    try {
      db.prepare('SELECT 1 FROM sqlite_master LIMIT 1').get();
      const manager = {
        query: (text: string, values: unknown[] = []) => {
          const statement = db.prepare(text);
          return Promise.resolve(
            statement.reader ? statement.all(...bind(values)) : statement.run(...bind(values)),
          );
        },
        connection: this.dataSource,
      } as unknown as EntityManager;
      const snapshot: Snapshot = {
        manager,
        async *batches(text, params) {
          const compiled = sql.compile(text, params);
          const rows = db
            .prepare(compiled.text)
            .iterate(...bind(compiled.values)) as IterableIterator<Record<string, unknown>>;
          try {
            for (;;) {
              const batch: Record<string, unknown>[] = [];
              for (let next = rows.next(); !next.done; next = rows.next()) {
                batch.push(next.value);
                if (batch.length === SNAPSHOT_BATCH_ROWS) break;
              }
              if (batch.length === 0) return;
              yield batch;
              // Let requests run between batches: better-sqlite3 reads synchronously.
              await new Promise((resolve) => setImmediate(resolve));
            }
          } finally {
            rows.return?.();
          }
        },
      };
      return await work(snapshot);
    } finally {
      db.exec('ROLLBACK');
    }
  }

  private sqliteReader(): Database.Database {
    if (this.sqlite) return this.sqlite;
    if (this.config.database.type !== 'sqlite') throw new Error('not a SQLite deployment');
    const db = new Database(this.config.database.path, { readonly: true, fileMustExist: true });
    db.pragma('busy_timeout = 5000');
    this.sqlite = db;
    return db;
  }
}
