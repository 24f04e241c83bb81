import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { randomBytes } from 'node:crypto';
import { setImmediate } from 'node:timers';
import {
  IMPORT_REMOVALS,
  type FullImportCollection,
  type ImportCollection,
} from '@platform/contract';
import { type EntityManager, In } from 'typeorm';
import type { BatchItem, BatchResult } from '../common/batch-upsert';
import { Clock } from '../common/clock';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/env';
import { TransactionRunner } from '../common/transactions';
import { CoursesService } from '../courses/courses.service';
import { Sql } from '../database/sql';
import { insertRows } from '../database/write-rows';
import { EnrollmentsService } from '../enrollments/enrollments.service';
import { ExamResultsService } from '../exams/exam-results.service';
import { ExamsService } from '../exams/exams.service';
import { PaymentsService } from '../payments/payments.service';
import { SERVER_RESOURCES } from '../resources';
import { StudentsService } from '../students/students.service';
import { type ImportCounts, ImportErrorRecord, ImportRecord } from './import.entity';
import { oneRosterColumn } from './oneroster';

const POLL_MS = 5_000;
/** Rows applied per transaction: one batch upsert's worth. */
const CHUNK = 1000;
/** A `receiving` import older than this lost its upload (a crash mid-request): swept. */
const RECEIVING_MAX_MS = 60 * 60 * 1000;

/** A collection's batch upsert, as each resource's service has it. */
interface BatchUpserter {
  batchUpsert(owner: { organizationId: string }, items: readonly BatchItem[]): Promise<BatchResult>;
}

const SERVICES = {
  students: StudentsService,
  courses: CoursesService,
  enrollments: EnrollmentsService,
  payments: PaymentsService,
  exams: ExamsService,
  exam_results: ExamResultsService,
} as const satisfies Record<ImportCollection, unknown>;

/** Another runner claimed the import since this one did: it stops. */
class ClaimLost extends Error {}
/** A dry run's work, undone: carries what it would have done out of the rolled-back transaction. */
class DryRun extends Error {
  constructor(readonly result: BatchResult) {
    super('dry run');
  }
}
/** The import stops, failed, with this reason. */
class ImportFailed extends Error {}

/** One step's outcome: what to add to the counts, its problems, and where the import now is. */
interface Step {
  counts: Partial<ImportCounts>;
  errors: ImportErrorRecord[];
  progress: Partial<ImportRecord>;
}

/**
 * Applies queued imports in the background, CHUNK staged rows per transaction through the
 * collection's batch upsert; the transaction also records the rows' problems and moves the
 * import's `next_row`, so a crash resumes at the first row not applied and applies none twice.
 * A `full` import then withdraws, in external-id order, the records the file left out. The work
 * queue is the `imports` table, claimed with a lease and a fencing token as exports are.
 */
@Injectable()
export class ImportRunner implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Imports');
  private draining: Promise<void> | undefined;
  private again = false;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly sql: Sql,
    private readonly transactions: TransactionRunner,
    private readonly clock: Clock,
    private readonly modules: ModuleRef,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => {
      this.kick();
      this.sweep().catch((error: unknown) =>
        this.logger.error({ error: (error as Error).message }, 'sweeping imports failed'),
      );
    }, POLL_MS);
    this.timer.unref();
    this.kick();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.draining;
  }

  /** Runs queued imports (and ones whose runner's lease lapsed) until none is left. */
  kick(): void {
    if (this.stopped) return;
    if (this.draining) {
      this.again = true;
      return;
    }
    this.draining = (async () => {
      do {
        this.again = false;
        for (let next = await this.claim(); next; next = await this.claim()) {
          await this.run(next);
          if (this.stopped) return;
        }
      } while (this.again && !this.stopped);
    })()
      .catch((error: unknown) =>
        this.logger.error({ error: (error as Error).message }, 'running imports failed'),
      )
      .finally(() => {
        this.draining = undefined;
      });
  }

  private claim(): Promise<ImportRecord | undefined> {
    return this.transactions.run(async (manager) => {
      const now = this.clock.now();
      const [first] = await this.sql.query<{ id: string }>(
        manager,
        // A bundle's import waits for the one before it to succeed.
        `SELECT id FROM imports i
         WHERE (i.status = 'queued' AND (i.after_import_id IS NULL OR EXISTS (
             SELECT 1 FROM imports b WHERE b.id = i.after_import_id AND b.status = 'succeeded')))
           OR (i.status = 'running' AND i.lease_until < :now)
         ORDER BY i.created_at, i.id LIMIT 1${this.sql.lockRows({ skipLocked: true })}`,
        { now: this.sql.bind(ImportRecord, 'leaseUntil', now) },
      );
      if (!first) return undefined;
      const claimed = {
        status: 'running' as const,
        leaseUntil: this.leaseFrom(now.getTime()),
        claimToken: randomBytes(16).toString('hex'),
      };
      await manager.update(ImportRecord, { id: first.id }, claimed);
      return (await manager.findOneBy(ImportRecord, { id: first.id })) ?? undefined;
    });
  }

  /** The claim's end if no progress renews it first (`IMPORT_LEASE`). */
  private leaseFrom(nowMs: number): Date {
    return new Date(nowMs + this.config.imports.leaseMs);
  }

  /** Works the import through to its end, a step (one transaction) at a time. */
  private async run(record: ImportRecord): Promise<void> {
    try {
      if (record.phase === 'upsert' && record.nextRow === 1) await this.precheck(record);
      while (!this.stopped) {
        await this.checkOwner(record);
        const step =
          record.phase === 'upsert'
            ? await this.upsertStep(record)
            : await this.withdrawStep(record);
        if (!step) break;
        // SQLite's driver is synchronous: without a turn of the event loop between chunks, an
        // import would hold off every request until its last row.
        await new Promise((resolve) => setImmediate(resolve));
      }
      if (this.stopped) return;
      await this.finish(record, { status: 'succeeded' });
    } catch (error) {
      if (error instanceof ClaimLost) return;
      const reason =
        error instanceof ImportFailed ? error.message : 'The import failed on an unexpected error';
      if (!(error instanceof ImportFailed)) {
        this.logger.error({ error: (error as Error).message, import: record.id }, 'import failed');
      }
      await this.finish(record, { status: 'failed', error: reason.slice(0, 500) }).catch(
        () => undefined,
      );
    }
  }

  /**
   * Before a `full` import writes anything: every row must name its record (a row without a
   * readable `external_id` could be anyone, so nothing may be withdrawn), and the share it would
   * withdraw must be within `change_threshold` unless confirmed.
   */
  private async precheck(record: ImportRecord): Promise<void> {
    if (record.mode !== 'full') return;
    const [unnamed] = await this.sql.select<{ n: number }>(
      `SELECT COUNT(*) AS n FROM import_rows WHERE import_id = :id AND external_id IS NULL`,
      { id: record.id },
    );
    if (Number(unnamed!.n) > 0) {
      throw new ImportFailed(
        `${Number(unnamed!.n)} rows have no readable external_id (see the error report); a full import runs only on a file whose every row names its record. Nothing was written.`,
      );
    }
    if (record.confirmed) return;
    const candidates = this.candidates(
      record as ImportRecord & { collection: FullImportCollection },
    );
    const [counted] = await this.sql.select<{ managed: number; leaving: number }>(
      `SELECT COUNT(*) AS managed,
         SUM(CASE WHEN ${candidates.missing} THEN 1 ELSE 0 END) AS leaving
       FROM ${candidates.table} t WHERE ${candidates.where}`,
      candidates.params,
    );
    const managed = Number(counted!.managed);
    const leaving = Number(counted!.leaving ?? 0);
    if (managed > 0 && leaving / managed > record.changeThreshold) {
      const share = ((leaving / managed) * 100).toFixed(1);
      throw new ImportFailed(
        `This full import would withdraw ${leaving} of the ${managed} ${record.collection} with an external_id (${share}%), more than its change_threshold of ${record.changeThreshold * 100}%. Nothing was written; send it again with confirm=true to apply it.`,
      );
    }
  }

  /** The collection's records a `full` import manages, and which of them its file leaves out. */
  private candidates(record: ImportRecord & { collection: FullImportCollection }) {
    const removal = IMPORT_REMOVALS[record.collection];
    return {
      table: this.sql.table(SERVER_RESOURCES[record.collection].entity),
      where: `t.organization_id = :org AND t.external_id IS NOT NULL AND t.status IN (:...from)`,
      missing: `NOT EXISTS (SELECT 1 FROM import_rows r
        WHERE r.import_id = :id AND r.external_id = t.external_id)`,
      params: { org: record.organizationId, id: record.id, from: [...removal.from] },
      to: removal.to,
    };
  }

  /** An import a member started stops once they are no longer a member. */
  private async checkOwner(record: ImportRecord): Promise<void> {
    if (record.ownerUserId === null) return;
    const rows = await this.sql.select(
      // A sandbox's imports are started by members of its parent.
      `SELECT 1 AS one FROM users WHERE id = :id AND organization_id = COALESCE(
         (SELECT parent_organization_id FROM organizations WHERE id = :org), :org)`,
      { id: record.ownerUserId, org: record.organizationId },
    );
    if (rows.length === 0) {
      throw new ImportFailed('The member who started this import was removed; it stopped there.');
    }
  }

  /** The next CHUNK staged rows, applied; false once there are none left. */
  private async upsertStep(record: ImportRecord): Promise<boolean> {
    const rows = await this.sql.select<{
      row_number: number;
      external_id: string | null;
      item: string | null;
    }>(
      `SELECT row_number, external_id, item FROM import_rows
       WHERE import_id = :id AND row_number >= :from AND row_number < :to ORDER BY row_number`,
      { id: record.id, from: record.nextRow, to: record.nextRow + CHUNK },
    );
    if (rows.length === 0 && record.nextRow > record.rowCount) {
      if (record.mode !== 'full') return false;
      await this.commit(record, { counts: {}, errors: [], progress: { phase: 'withdraw' } });
      return true;
    }
    const applied = rows.filter((row) => row.item !== null);
    const items = applied.map((row) => JSON.parse(row.item!) as BatchItem);
    const nextRow = record.nextRow + CHUNK;
    await this.apply(record, items, (result) => {
      const counts: Partial<ImportCounts> = { ...result.counts };
      const errors = result.data.flatMap((item) =>
        item.error ? errorLines(record, applied[item.index]!.row_number, item) : [],
      );
      return { counts, errors, progress: { nextRow: Math.min(nextRow, record.rowCount + 1) } };
    });
    return true;
  }

  /** The next CHUNK records a `full` file left out, withdrawn; false once there are none left. */
  private async withdrawStep(record: ImportRecord): Promise<boolean> {
    const candidates = this.candidates(
      record as ImportRecord & { collection: FullImportCollection },
    );
    const after = record.withdrawnThrough;
    const rows = await this.sql.select<{ external_id: string }>(
      `SELECT t.external_id FROM ${candidates.table} t
       WHERE ${candidates.where} AND ${candidates.missing}${after === null ? '' : ' AND t.external_id > :after'}
       ORDER BY t.external_id LIMIT ${CHUNK}`,
      { ...candidates.params, ...(after !== null && { after }) },
    );
    if (rows.length === 0) return false;
    const items = rows.map((row) => ({ external_id: row.external_id, status: candidates.to }));
    await this.apply(record, items, (result) => ({
      counts: { withdrawn: result.counts.updated, failed: result.counts.failed },
      errors: result.data.flatMap((item) =>
        item.error ? errorLines(record, 0, item, record.failed + item.index) : [],
      ),
      progress: { withdrawnThrough: rows[rows.length - 1]!.external_id },
    }));
    return true;
  }

  /**
   * Runs the collection's batch upsert on `items` and records `outcome` of it, in one
   * transaction; a dry run's upsert is rolled back first and only the outcome is kept.
   */
  private async apply(
    record: ImportRecord,
    items: readonly BatchItem[],
    outcome: (result: BatchResult) => Step,
  ): Promise<void> {
    const service: BatchUpserter = this.modules.get<unknown, BatchUpserter>(
      SERVICES[record.collection],
      { strict: false },
    );
    const owner = { organizationId: record.organizationId };
    const empty: BatchResult = {
      object: 'batch_result',
      counts: { created: 0, updated: 0, unchanged: 0, failed: 0 },
      data: [],
    };
    if (record.dryRun) {
      const result =
        items.length === 0
          ? empty
          : await this.transactions
              .atomic(async () => {
                await this.applyEarlierInBundle(record, items);
                throw new DryRun(await service.batchUpsert(owner, items));
              })
              .catch((error: unknown) => {
                if (error instanceof DryRun) return error.result;
                throw error;
              });
      await this.commit(record, outcome(result));
      return;
    }
    await this.transactions.atomic(async (manager) => {
      const result = items.length === 0 ? empty : await service.batchUpsert(owner, items);
      await this.record(manager, record, outcome(result));
    });
  }

  /**
   * A dry run of a bundle's enrollments: the students and classes its earlier imports would add
   * are applied first (in the same rolled-back transaction), so each enrollment is tried as it
   * would run, not refused for a student the bundle itself brings.
   */
  private async applyEarlierInBundle(
    record: ImportRecord,
    items: readonly BatchItem[],
  ): Promise<void> {
    if (record.bundle === null || record.collection !== 'enrollments') return;
    const earlier = record.bundle.split(',').filter((id) => id !== record.id);
    const named = new Set<string>();
    for (const item of items) {
      for (const ref of [item.student_id, item.course_id]) {
        if (typeof ref === 'string' && ref.startsWith('ext:')) named.add(ref.slice(4));
      }
    }
    if (named.size === 0 || earlier.length === 0) return;
    const rows = await this.sql.select<{ collection: ImportCollection; item: string }>(
      `SELECT i.collection, r.item FROM import_rows r JOIN imports i ON i.id = r.import_id
       WHERE r.import_id IN (:...earlier) AND r.external_id IN (:...named) AND r.item IS NOT NULL
       ORDER BY r.import_id, r.row_number`,
      { earlier, named: [...named] },
    );
    const owner = { organizationId: record.organizationId };
    for (const collection of ['students', 'courses'] as const) {
      const add = rows.filter((row) => row.collection === collection);
      if (add.length === 0) continue;
      const service = this.modules.get<unknown, BatchUpserter>(SERVICES[collection], {
        strict: false,
      });
      await service.batchUpsert(
        owner,
        add.map((row) => JSON.parse(row.item) as BatchItem),
      );
    }
  }

  private commit(record: ImportRecord, step: Step): Promise<void> {
    return this.transactions.run((manager) => this.record(manager, record, step));
  }

  /** Writes a step's errors and progress, fenced by the claim; `record` follows. */
  private async record(manager: EntityManager, record: ImportRecord, step: Step): Promise<void> {
    const counts = { ...step.counts };
    const changes: Partial<ImportRecord> = { ...step.progress };
    for (const name of ['created', 'updated', 'unchanged', 'failed', 'withdrawn'] as const) {
      if (counts[name]) changes[name] = record[name] + counts[name];
    }
    changes.leaseUntil = this.leaseFrom(this.clock.nowMs());
    const result = await manager.update(
      ImportRecord,
      { id: record.id, claimToken: record.claimToken! },
      changes,
    );
    if (result.affected !== 1) throw new ClaimLost();
    await insertRows(manager, ImportErrorRecord, step.errors);
    this.transactions.afterCommit(manager, () => Object.assign(record, changes));
  }

  /**
   * Ends the import (fenced), and drops its staged rows: the file is not kept once applied. A
   * failed import's bundle stops there: the imports after it fail unrun. A dry-run bundle keeps
   * its rows until its last import ends: that one tries its rows with the earlier ones' applied.
   */
  private async finish(
    record: ImportRecord,
    end: { status: 'succeeded' | 'failed'; error?: string },
  ): Promise<void> {
    await this.transactions.run(async (manager) => {
      const now = this.clock.now();
      const result = await manager.update(
        ImportRecord,
        { id: record.id, claimToken: record.claimToken! },
        {
          status: end.status,
          error: end.error ?? null,
          leaseUntil: null,
          claimToken: null,
          completedAt: now,
        },
      );
      if (result.affected !== 1) throw new ClaimLost();
      const chain = record.bundle?.split(',') ?? [record.id];
      const later = chain.slice(chain.indexOf(record.id) + 1);
      if (end.status === 'failed' && later.length > 0) {
        await manager.update(
          ImportRecord,
          { id: In(later), status: 'queued' },
          {
            status: 'failed',
            error: `Not run: the bundle's ${record.sourceFile} import before it failed.`,
            completedAt: now,
          },
        );
      }
      const done = end.status === 'failed' || later.length === 0;
      const drop = !record.dryRun ? [record.id] : done ? chain : [];
      if (drop.length > 0) {
        await this.sql.query(manager, `DELETE FROM import_rows WHERE import_id IN (:...ids)`, {
          ids: drop,
        });
      }
    });
  }

  /** Imports whose upload never finished (the instance died mid-request). */
  private async sweep(): Promise<void> {
    const cutoff = new Date(this.clock.nowMs() - RECEIVING_MAX_MS);
    await this.transactions.run(async (manager) => {
      await this.sql.query(
        manager,
        `DELETE FROM imports WHERE status = 'receiving' AND created_at < :cutoff`,
        { cutoff: this.sql.bind(ImportRecord, 'createdAt', cutoff) },
      );
    });
  }
}

/** A failed item's lines in the error report: one per field at fault, or one for the row. */
function errorLines(
  record: ImportRecord,
  rowNumber: number,
  item: BatchResult['data'][number],
  firstSeq = 0,
): ImportErrorRecord[] {
  const error = item.error!;
  const base = { importId: record.id, rowNumber, externalId: item.external_id };
  const fields =
    error.errors.length > 0
      ? error.errors
      : [{ path: '', code: error.code, message: error.detail }];
  return fields.map((e, index) => ({
    ...base,
    seq: firstSeq + index,
    field: oneRosterColumn(record.sourceFile, e.path.replace(/^body\.items\.\d+\.?/, '')).slice(
      0,
      200,
    ),
    code: (e.code ?? error.code).slice(0, 64),
    problem: (e.path ? e.message : error.detail).slice(0, 1000),
  }));
}
