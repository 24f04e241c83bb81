import { randomBytes } from 'node:crypto';
import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import {
  contract,
  EXPORT_COLLECTION_SCOPES,
  EXPORT_COLLECTIONS,
  EXPORT_DOWNLOAD_LINK_TTL_SECONDS,
  EXPORT_DOWNLOAD_PATH,
  type Export,
  type ExportDownloadLink,
  type ExportCollection,
  type ExportCreateSchema,
  type ListQuery,
} from '@platform/contract';
import type { DataSource, Repository } from 'typeorm';
import type { z } from 'zod';
import { AuditService } from '../audit/audit.service';
import type { ApiAuditActor } from '../audit/audit-actor';
import { Clock } from '../common/clock';
import { newId } from '../common/ids';
import { ListCollection } from '../common/list/find-page';
import type { Statement } from '../common/list/list-types';
import { pageEnvelope, type PageUrl } from '../common/list/page-envelope';
import type { Principal } from '../common/principal';
import { ProblemException } from '../common/problem.exception';
import { notFound } from '../common/resource-errors';
import { toIso } from '../common/timestamp';
import { TransactionRunner } from '../common/transactions';
import { APP_CONFIG } from '../config/config.module';
import { type AppConfig, serverOrigin } from '../config/env';
import { earlierExpiry } from '../auth/delegation';
import { hashToken } from '../security/crypto';
import { memberRoleScopes, ownerEnded, ownerOf, ownerSql } from '../auth/member-owned';
import { ExportDownloadLinkRecord } from './export-download-link.entity';
import { Sql } from '../database/sql';
import { FeedPositions } from '../events/feed-position';
import { COLLECTION_SOURCES, rowMapper } from './collections';
import { ExportRecord } from './export.entity';
import { ChunkWriter, csvHeader, csvRow, ExportFiles, ndjsonLine } from './export-files';
import { exportRowsQuery } from './export-query';
import { type Snapshot, SnapshotOpener } from './snapshot';

type ExportCreate = z.output<typeof ExportCreateSchema>;

/** How long a worker's claim on a running export holds without progress before another takes it. */
const LEASE_MS = 60_000;
/** How often each instance looks for queued exports it was not told about, and for expired files. */
const POLL_MS = 5_000;

export function toExportResource(record: ExportRecord, now: number): Export {
  const expired =
    record.status === 'expired' ||
    (record.status === 'succeeded' &&
      record.expiresAt !== null &&
      record.expiresAt.getTime() <= now);
  return {
    id: record.id as Export['id'],
    object: 'export',
    collection: record.collection,
    format: record.format,
    filters: JSON.parse(record.filters) as Record<string, string>,
    status: expired ? 'expired' : record.status,
    row_count: record.rowCount,
    size_bytes: expired ? null : record.sizeBytes,
    cursor: record.cursor,
    error: record.error,
    created_at: toIso(record.createdAt),
    completed_at: record.completedAt ? toIso(record.completedAt) : null,
    expires_at: record.expiresAt ? toIso(record.expiresAt) : null,
  };
}

/** What an export reads: its unpaged statement, and how each row becomes a resource's fields. */
interface ExportReading {
  every: Statement;
  toResource: (row: Record<string, unknown>) => Record<string, unknown>;
  fields: string[];
}

/** A download link's token: a prefix (for secret scanners) and 256 random bits. */
const LINK_TOKEN = /^expdl_[A-Za-z0-9_-]{43}$/;

function newLinkToken(): string {
  return `expdl_${randomBytes(32).toString('base64url')}`;
}

/** Every way a download link can fail looks the same: which one is not the caller's to learn. */
function linkNotFound(): ProblemException {
  return new ProblemException(
    'not_found',
    'No such download link, or it has expired; ask for a new one (POST /v1/exports/{id}/download_links)',
  );
}

function readable(principal: Principal): ExportCollection[] {
  return EXPORT_COLLECTIONS.filter((c) => principal.scopes.has(EXPORT_COLLECTION_SCOPES[c]));
}

/**
 * Exports: each reads one collection from one consistent snapshot (SnapshotOpener) in the
 * background, writes its file in chunks (ExportFiles), and records the feed cursor of that
 * snapshot. The work queue is the `exports` table itself: any instance claims a queued export
 * (SKIP LOCKED on PostgreSQL) and holds it with a lease, so an instance that dies mid-export
 * leaves it to another.
 */
@Injectable()
export class ExportsService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Exports');
  private readonly listed: ListCollection<ExportRecord>;
  private draining: Promise<void> | undefined;
  private again = false;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    @InjectRepository(ExportRecord) private readonly exports: Repository<ExportRecord>,
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly sql: Sql,
    private readonly transactions: TransactionRunner,
    private readonly clock: Clock,
    private readonly audit: AuditService,
    private readonly files: ExportFiles,
    private readonly snapshots: SnapshotOpener,
    private readonly feed: FeedPositions,
  ) {
    // An export's `updated_since` reads its creation time: it has no other change worth syncing.
    this.listed = ListCollection.of(sql, exports, contract.exports.list.query, {
      updated_at: 'created_at',
    });
  }

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

  async create(principal: Principal, body: ExportCreate, actor: ApiAuditActor): Promise<Export> {
    const scope = EXPORT_COLLECTION_SCOPES[body.collection];
    if (!principal.scopes.has(scope)) {
      throw new ProblemException(
        'insufficient_scope',
        `Exporting ${body.collection} requires the '${scope}' scope`,
        {
          headers: {
            'WWW-Authenticate': `Bearer realm="platform", error="insufficient_scope", scope="${scope}"`,
          },
        },
      );
    }
    exportRowsQuery(body.collection, body.filters);
    const now = this.clock.now();
    const record: ExportRecord = {
      id: newId('export', now.getTime()),
      organizationId: principal.organizationId,
      collection: body.collection,
      format: body.format,
      filters: JSON.stringify(body.filters),
      status: 'queued',
      rowCount: 0,
      sizeBytes: null,
      cursor: null,
      error: null,
      leaseUntil: null,
      createdAt: now,
      completedAt: null,
      expiresAt: null,
    };
    await this.transactions.run(async (manager) => {
      await manager.insert(ExportRecord, record);
      await this.audit.record(
        actor,
        {
          action: 'export.created',
          targetType: 'export',
          targetId: record.id,
          changes: { collection: body.collection, format: body.format, filters: body.filters },
        },
        manager,
      );
      this.transactions.afterCommit(manager, () => this.kick());
    });
    return toExportResource(record, now.getTime());
  }

  async list(principal: Principal, query: ListQuery, url: PageUrl) {
    const collections = readable(principal);
    if (collections.length === 0) {
      return { data: [], ...pageEnvelope(url, query, { count: 0, exact: true }) };
    }
    const scoped: ListQuery = {
      ...query,
      conditions: [...query.conditions, { field: 'collection', op: 'in', values: collections }],
    };
    const { rows, total } = await this.listed.find(principal.organizationId, scoped);
    const now = this.clock.nowMs();
    return {
      data: rows.map((row) => toExportResource(row, now)),
      ...pageEnvelope(url, query, total),
    };
  }

  async retrieve(principal: Principal, id: string): Promise<Export> {
    return toExportResource(await this.find(principal, id), this.clock.nowMs());
  }

  /** The file of a succeeded export, and its format; 409 when there is none (yet, or any more). */
  async download(principal: Principal, id: string) {
    const record = await this.find(principal, id);
    return { export: this.withFile(record), chunks: this.files.read(record.id) };
  }

  /**
   * A link that downloads the export's file without a token until it expires. Only the token's
   * SHA-256 is stored, with the credential that asked (as a webhook endpoint records its owner),
   * so the link dies with that credential or member; the creation is audited.
   */
  async createDownloadLink(
    principal: Principal,
    id: string,
    actor: ApiAuditActor,
  ): Promise<ExportDownloadLink> {
    const record = await this.find(principal, id);
    this.withFile(record);
    const token = newLinkToken();
    const now = this.clock.now();
    // Five minutes, and never past the calling token's own expiry.
    const expiresAt = earlierExpiry(
      new Date(now.getTime() + EXPORT_DOWNLOAD_LINK_TTL_SECONDS * 1000),
      principal.expiresAt,
    )!;
    const link: ExportDownloadLinkRecord = {
      tokenHash: hashToken(token),
      exportId: record.id,
      organizationId: principal.organizationId,
      ...ownerOf(principal),
      createdAt: now,
      expiresAt,
    };
    await this.transactions.run(async (manager) => {
      await manager.insert(ExportDownloadLinkRecord, link);
      await this.audit.record(
        actor,
        {
          action: 'export.download_link_created',
          targetType: 'export',
          targetId: record.id,
          changes: { expires_at: toIso(expiresAt) },
        },
        manager,
      );
    });
    return {
      object: 'export_download_link',
      export_id: record.id as ExportDownloadLink['export_id'],
      url: `${serverOrigin(this.config)}${EXPORT_DOWNLOAD_PATH}/${token}`,
      expires_at: toIso(expiresAt),
    };
  }

  /**
   * The file a download link points at, or a 404 that does not say why: an unknown or expired
   * link, a credential revoked or expired, a member removed or no longer allowed to read the
   * collection, an export expired or gone. All checked here, at each use, so every way any of
   * those ends (API, CLI, OAuth revocation, expiry) is covered without a hook in each.
   */
  async redeemDownloadLink(token: string) {
    if (!LINK_TOKEN.test(token)) throw linkNotFound();
    const owner = ownerSql(this.sql, ExportDownloadLinkRecord);
    const rows = await this.sql.select<Record<string, unknown>>(
      `SELECT e.export_id AS export_id, e.organization_id AS organization_id,
         e.expires_at AS link_expires_at, ${owner.select}
       FROM ${this.sql.table(ExportDownloadLinkRecord)} e ${owner.join}
       WHERE e.token_hash = :hash`,
      { hash: hashToken(token) },
    );
    const row = rows[0];
    const now = this.clock.now();
    const toDate = (value: unknown) =>
      value == null ? null : (this.sql.read(ExportDownloadLinkRecord, 'expiresAt', value) as Date);
    if (!row || toDate(row.link_expires_at)!.getTime() <= now.getTime()) throw linkNotFound();
    if (ownerEnded(row, now, toDate)) throw linkNotFound();
    const record = await this.exports.findOneBy({
      id: row.export_id as string,
      organizationId: row.organization_id as string,
    });
    if (!record) throw linkNotFound();
    // A member demoted since: the link reads no more than their role may.
    if (memberRoleScopes(row)?.has(EXPORT_COLLECTION_SCOPES[record.collection]) === false)
      throw linkNotFound();
    const resource = toExportResource(record, now.getTime());
    if (resource.status !== 'succeeded') throw linkNotFound();
    return { export: resource, chunks: this.files.read(record.id) };
  }

  /** The export as a resource when it has a file; a 409 saying why when it has none. */
  private withFile(record: ExportRecord): Export {
    const resource = toExportResource(record, this.clock.nowMs());
    if (resource.status !== 'succeeded') {
      throw new ProblemException(
        'conflict',
        resource.status === 'expired'
          ? `Export ${record.id} has expired and its file was deleted; start a new export`
          : `Export ${record.id} is ${resource.status}; its file can be downloaded once it has succeeded`,
      );
    }
    return resource;
  }

  private async find(principal: Principal, id: string): Promise<ExportRecord> {
    const record = await this.exports.findOneBy({ id, organizationId: principal.organizationId });
    // An export of a collection the token cannot read is as absent as another organization's.
    if (!record || !readable(principal).includes(record.collection)) throw notFound('export', id);
    return record;
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
        for (let next = await this.claim(); next; next = await this.claim()) {
          await this.runExport(next);
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

  private claim(): Promise<ExportRecord | null> {
    return this.transactions.run(async (manager) => {
      const now = this.clock.now();
      const rows = await this.sql.query<{ id: string }>(
        manager,
        `SELECT id FROM exports WHERE status = 'queued' OR (status = 'running' AND lease_until < :now)
         ORDER BY created_at LIMIT 1${this.sql.lockRows({ skipLocked: true })}`,
        { now: this.sql.bind(ExportRecord, 'leaseUntil', now) },
      );
      const id = rows[0]?.id;
      if (!id) return null;
      await manager.update(
        ExportRecord,
        { id },
        { status: 'running', leaseUntil: new Date(now.getTime() + LEASE_MS), rowCount: 0 },
      );
      return manager.findOneBy(ExportRecord, { id });
    });
  }

  private async runExport(record: ExportRecord): Promise<void> {
    try {
      // A lapsed lease: whatever the previous runner wrote is started over.
      await this.files.delete(record.id);
      const reading = this.readingOf(record);
      const { rows, bytes } = await this.snapshots.run((snapshot) =>
        this.writeFile(record, reading, snapshot),
      );
      const completed = this.clock.now();
      await this.setRecord(
        { id: record.id },
        {
          status: 'succeeded',
          rowCount: rows,
          sizeBytes: bytes,
          leaseUntil: null,
          completedAt: completed,
          expiresAt: new Date(completed.getTime() + this.config.exports.retentionMs),
        },
      );
    } catch (error) {
      this.logger.error({ export: record.id, error: (error as Error).message }, 'export failed');
      await this.files.delete(record.id).catch(() => undefined);
      await this.setRecord(
        { id: record.id },
        {
          status: 'failed',
          error: 'The export could not be completed; start a new one.',
          leaseUntil: null,
          completedAt: this.clock.now(),
        },
      );
    }
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
    const toResource = rowMapper(this.dataSource, source);
    const fields = Object.keys(source.resource.shape as Record<string, unknown>);
    return { every, toResource, fields };
  }

  /**
   * Writes the export's file from the snapshot, after recording the snapshot's feed cursor; each
   * chunk commits with the export's progress and a renewed lease.
   */
  private async writeFile(
    record: ExportRecord,
    { every, toResource, fields }: ExportReading,
    snapshot: Snapshot,
  ): Promise<{ rows: number; bytes: number }> {
    const cursor = await this.feed.head(snapshot.manager, record.organizationId);
    await this.setRecord({ id: record.id }, { cursor });
    let rowCount = 0;
    const writer = new ChunkWriter(async (seq, data) => {
      const progress = { rowCount, leaseUntil: new Date(this.clock.nowMs() + LEASE_MS) };
      await this.files.append(record.id, seq, data, (manager) =>
        manager.update(ExportRecord, { id: record.id }, progress),
      );
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
