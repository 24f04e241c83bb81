import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource, type EntityManager, In } from 'typeorm';
import { Clock } from '../common/clock';
import { ListCollection } from '../common/list/find-page';
import type { Statement } from '../common/list/list-types';
import { TransactionRunner } from '../common/transactions';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/env';
import { Sql } from '../database/sql';
import { FeedPositions } from '../events/feed-position';
import { COLLECTION_SOURCES, exportRowMapper } from './collections';
import { ExportDownloadLinkRecord } from './export-download-link.entity';
import { ExportRecord } from './export.entity';
import { ChunkWriter, csvHeader, csvRow, ExportFiles, ndjsonLine } from './export-files';
import { exportRowsQuery } from './export-query';
import { type Snapshot, SnapshotOpener } from './snapshot';

/** How long a worker's claim on a running export holds without progress before another takes it. */
const LEASE_MS = 60_000;
/** How often each instance looks for queued exports it was not told about, and for expired files. */
const POLL_MS = 5_000;

/** Another runner claimed the exports since this one did (its lease had lapsed): it stops. */
class ClaimLost extends Error {
  constructor() {
    super('another runner took the export over');
  }
}

/** What an export reads: its unpaged statement, and how each row becomes a resource's fields. */
interface ExportReading {
  every: Statement;
  toResource: (row: Record<string, unknown>) => Record<string, unknown>;
  fields: string[];
}

/**
 * Runs exports in the background: each reads its collection from one consistent snapshot
 * (SnapshotOpener), writes its file in chunks (ExportFiles), and records the feed cursor of that
 * snapshot; the exports of a batch share one snapshot. The work queue is the `exports` table
 * itself: any instance claims a queued export (SKIP LOCKED on PostgreSQL) and holds it with a
 * lease, so an instance that dies mid-export leaves it to another. Every claim has a token of its
 * own, and every write of a run is made only while the token is still the run's (fenced), so an
 * instance that was merely slow past its lease stops at its next write instead of finishing,
 * failing or deleting what its successor wrote.
 */
@Injectable()
export class ExportRunner implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Exports');
  private draining: Promise<void> | undefined;
  private again = false;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly sql: Sql,
    private readonly transactions: TransactionRunner,
    private readonly clock: Clock,
    private readonly files: ExportFiles,
    private readonly snapshots: SnapshotOpener,
    private readonly feed: FeedPositions,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(
      () => {
        this.kick();
        this.expire().catch((error: unknown) =>
          this.logger.error({ error: (error as Error).message }, 'expiring exports failed'),
        );
      },
      Math.min(POLL_MS, this.config.exports.retentionMs),
    );
    this.timer.unref();
    this.kick();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.draining;
  }

  /** Runs queued exports (and ones whose runner's lease lapsed) until none is left. */
  kick(): void {
    if (this.stopped) return;
    if (this.draining) {
      this.again = true;
      return;
    }
    this.draining = (async () => {
      do {
        this.again = false;
        for (let next = await this.claim(); next.length; next = await this.claim()) {
          await this.runExports(next);
          if (this.stopped) return;
        }
      } while (this.again && !this.stopped);
    })()
      .catch((error: unknown) =>
        this.logger.error({ error: (error as Error).message }, 'running exports failed'),
      )
      .finally(() => {
        this.draining = undefined;
      });
  }

  /**
   * Claims the oldest export that is queued or whose runner's lease lapsed, with every other
   * unfinished export of its batch: a batch is only ever read whole, from one snapshot.
   */
  private claim(): Promise<ExportRecord[]> {
    return this.transactions.run(async (manager) => {
      const now = this.clock.now();
      const rows = await this.sql.query<{ id: string; batch_id: string | null }>(
        manager,
        `SELECT id, batch_id FROM exports
         WHERE (status = 'queued' OR (status = 'running' AND lease_until < :now))
           AND (batch_id IS NULL OR batch_id = id)
         ORDER BY created_at LIMIT 1${this.sql.lockRows({ skipLocked: true })}`,
        { now: this.sql.bind(ExportRecord, 'leaseUntil', now) },
      );
      const first = rows[0];
      if (!first) return [];
      const claimed = {
        status: 'running' as const,
        leaseUntil: new Date(now.getTime() + LEASE_MS),
        claimToken: randomBytes(16).toString('hex'),
      };
      if (first.batch_id === null) {
        await manager.update(ExportRecord, { id: first.id }, { ...claimed, rowCount: 0 });
        return manager.findBy(ExportRecord, { id: first.id });
      }
      // Only a batch's first export (its id is the batch's) is ever a candidate, so holding its
      // lock holds the batch: another instance skips it and cannot pick up the rest.
      await manager.update(
        ExportRecord,
        { batchId: first.batch_id, status: In(['queued', 'running']) },
        { ...claimed, rowCount: 0 },
      );
      return manager.find(ExportRecord, {
        where: { batchId: first.batch_id, status: 'running' },
        order: { id: 'ASC' },
      });
    });
  }

  /**
   * Reads the claimed exports (one, or a batch) from one snapshot, each into its own file, and
   * marks them all succeeded in one commit once every file is complete, or all failed. Every
   * write is fenced by the claim's token: a run taken over stops and leaves the rows alone.
   */
  private async runExports(records: ExportRecord[]): Promise<void> {
    const ids = records.map((record) => record.id);
    const token = records[0]!.claimToken!;
    const renewed = () => new Date(this.clock.nowMs() + LEASE_MS);
    try {
      // A lapsed lease: whatever the previous runner wrote is started over.
      for (const id of ids) {
        await this.files.delete(id, (manager) =>
          this.fenced(manager, ids, token, { leaseUntil: renewed() }),
        );
      }
      const readings = records.map((record) => this.readingOf(record));
      const written = await this.snapshots.run(async (snapshot) => {
        const cursor = await this.feed.head(snapshot.manager, records[0]!.organizationId);
        await this.transactions.run((manager) =>
          this.fenced(manager, ids, token, { cursor, leaseUntil: renewed() }),
        );
        const results: { rows: number; bytes: number }[] = [];
        for (const [index, record] of records.entries()) {
          results.push(await this.writeFile(record, readings[index]!, snapshot, ids, token));
        }
        return results;
      });
      const completed = this.clock.now();
      await this.transactions.run(async (manager) => {
        for (const [index, id] of ids.entries()) {
          await this.fenced(manager, [id], token, {
            status: 'succeeded',
            rowCount: written[index]!.rows,
            sizeBytes: written[index]!.bytes,
            leaseUntil: null,
            completedAt: completed,
            expiresAt: new Date(completed.getTime() + this.config.exports.retentionMs),
          });
        }
      });
    } catch (error) {
      if (error instanceof ClaimLost) {
        this.logger.warn({ exports: ids }, 'export taken over by another runner; this one stops');
        return;
      }
      this.logger.error({ exports: ids, error: (error as Error).message }, 'export failed');
      await this.fail(ids, token);
    }
  }

  /** Marks the run's exports failed and deletes their files, unless another runner has them. */
  private async fail(ids: string[], token: string): Promise<void> {
    try {
      await this.transactions.run((manager) =>
        this.fenced(manager, ids, token, {
          status: 'failed',
          error: 'The export could not be completed; start a new one.',
          leaseUntil: null,
          completedAt: this.clock.now(),
        }),
      );
    } catch (error) {
      if (error instanceof ClaimLost) return;
      throw error;
    }
    for (const id of ids) await this.files.delete(id).catch(() => undefined);
  }

  /**
   * Writes `changes` to the exports `ids` only if the claim `token` still holds every one of
   * them; otherwise throws ClaimLost, which rolls back the transaction it is part of.
   */
  private async fenced(
    manager: EntityManager,
    ids: string[],
    token: string,
    changes: Partial<ExportRecord>,
  ): Promise<void> {
    const result = await manager.update(ExportRecord, { id: In(ids), claimToken: token }, changes);
    if (result.affected !== ids.length) throw new ClaimLost();
  }

  /** The statement an export reads, and its mapping; a bad filter throws (as `create` would). */
  private readingOf(record: ExportRecord): ExportReading {
    const source = COLLECTION_SOURCES[record.collection];
    const query = exportRowsQuery(
      record.collection,
      JSON.parse(record.filters) as Record<string, string>,
    );
    const repo = this.dataSource.getRepository(source.entity);
    const { every } = ListCollection.of(this.sql, repo, source.listQuery).statements(
      record.organizationId,
      query,
    );
    // An export's filters never search (EXPORT_REFUSED_FILTERS has q).
    if (!every) throw new Error('an export query has no unpaged statement');
    const toResource = exportRowMapper(this.dataSource, source);
    const fields = Object.keys(source.resource.shape as Record<string, unknown>);
    return { every, toResource, fields };
  }

  /**
   * Writes the export's file from the snapshot; each chunk commits with the export's progress and
   * a renewed lease for every export being run with it (`running`), so none of a batch lapses
   * while another of it is written, and only while the run's claim (`token`) holds them all.
   */
  private async writeFile(
    record: ExportRecord,
    { every, toResource, fields }: ExportReading,
    snapshot: Snapshot,
    running: string[],
    token: string,
  ): Promise<{ rows: number; bytes: number }> {
    let rowCount = 0;
    const writer = new ChunkWriter(async (seq, data) => {
      const leaseUntil = new Date(this.clock.nowMs() + LEASE_MS);
      await this.files.append(record.id, seq, data, async (manager) => {
        await this.fenced(manager, running, token, { leaseUntil });
        await manager.update(ExportRecord, { id: record.id }, { rowCount });
      });
    });
    if (record.format === 'csv') await writer.write(csvHeader(fields));
    const format =
      record.format === 'csv' ? (r: Record<string, unknown>) => csvRow(fields, r) : ndjsonLine;
    for await (const batch of snapshot.batches(every.text, every.params)) {
      for (const row of batch) {
        const line = format(toResource(row));
        if (!writer.tryWrite(line)) await writer.write(line);
        rowCount += 1;
      }
    }
    await writer.end();
    return { rows: rowCount, bytes: writer.bytes };
  }

  /** Through the transaction queue: on SQLite a lone statement would join an open transaction. */
  private setRecord(id: { id: string }, changes: Partial<ExportRecord>): Promise<unknown> {
    return this.transactions.run((manager) => manager.update(ExportRecord, id, changes));
  }

  /** Marks exports past their expiry `expired` and deletes their files, and expired links. */
  async expire(): Promise<void> {
    const now = this.clock.now();
    await this.transactions.run((manager) =>
      this.sql.query(
        manager,
        `DELETE FROM ${this.sql.table(ExportDownloadLinkRecord)} WHERE expires_at <= :now`,
        { now: this.sql.bind(ExportDownloadLinkRecord, 'expiresAt', now) },
      ),
    );
    const due = await this.sql.select<{ id: string }>(
      `SELECT id FROM exports WHERE status = 'succeeded' AND expires_at <= :now`,
      { now: this.sql.bind(ExportRecord, 'expiresAt', now) },
    );
    for (const { id } of due) {
      await this.files.delete(id);
      await this.setRecord({ id }, { status: 'expired', sizeBytes: null });
    }
  }
}
