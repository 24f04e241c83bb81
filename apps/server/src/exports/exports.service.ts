import { randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import {
  contract,
  EXPORT_COLLECTION_SCOPES,
  EXPORT_COLLECTIONS,
  EXPORT_DOWNLOAD_LINK_TTL_SECONDS,
  EXPORT_DOWNLOAD_PATH,
  type Export,
  type ExportBatch,
  type ExportBatchCreateSchema,
  type ExportDownloadLink,
  type ExportFormat,
  type ExportCollection,
  type ExportCreateSchema,
  type ListQuery,
} from '@platform/contract';
import type { Repository } from 'typeorm';
import type { z } from 'zod';
import { AuditService } from '../audit/audit.service';
import type { ApiAuditActor } from '../audit/audit-actor';
import { Clock } from '../common/clock';
import { newId } from '../common/ids';
import { ListCollection } from '../common/list/find-page';
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
import { ExportRecord } from './export.entity';
import { ExportFiles } from './export-files';
import { exportRowsQuery } from './export-query';
import { ExportRunner } from './export-runner';
import { encodeFeedCursor } from '../events/feed-cursor';

type ExportCreate = z.output<typeof ExportCreateSchema>;
type ExportBatchCreate = z.output<typeof ExportBatchCreateSchema>;

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
    cursor: record.cursor === null ? null : encodeFeedCursor(record.organizationId, record.cursor),
    error: record.error,
    created_at: toIso(record.createdAt),
    completed_at: record.completedAt ? toIso(record.completedAt) : null,
    expires_at: record.expiresAt ? toIso(record.expiresAt) : null,
  };
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

/** A 403 naming the read scope of `collection` when the principal lacks it. */
function requireCollectionScope(principal: Principal, collection: ExportCollection): void {
  const scope = EXPORT_COLLECTION_SCOPES[collection];
  if (principal.scopes.has(scope)) return;
  throw new ProblemException(
    'insufficient_scope',
    `Exporting ${collection} requires the '${scope}' scope`,
    {
      headers: {
        'WWW-Authenticate': `Bearer realm="platform", error="insufficient_scope", scope="${scope}"`,
      },
    },
  );
}

function readable(principal: Principal): ExportCollection[] {
  return EXPORT_COLLECTIONS.filter((c) => principal.scopes.has(EXPORT_COLLECTION_SCOPES[c]));
}

/**
 * Exports over the API: starting them (alone or as a batch), listing, files and download links.
 * ExportRunner runs them in the background.
 */
@Injectable()
export class ExportsService {
  private readonly listed: ListCollection<ExportRecord>;

  constructor(
    @InjectRepository(ExportRecord) private readonly exports: Repository<ExportRecord>,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly sql: Sql,
    private readonly transactions: TransactionRunner,
    private readonly clock: Clock,
    private readonly audit: AuditService,
    private readonly files: ExportFiles,
    private readonly runner: ExportRunner,
  ) {
    // An export's `updated_since` reads its creation time: it has no other change worth syncing.
    this.listed = ListCollection.of(sql, exports, contract.exports.list.query, {
      updated_at: 'created_at',
    });
  }

  async create(principal: Principal, body: ExportCreate, actor: ApiAuditActor): Promise<Export> {
    requireCollectionScope(principal, body.collection);
    exportRowsQuery(body.collection, body.filters);
    const [record] = await this.start(principal, actor, [
      { collection: body.collection, format: body.format, filters: body.filters },
    ]);
    return toExportResource(record!, record!.createdAt.getTime());
  }

  /**
   * One export per collection, started together: they share a batch id, so the worker claims
   * them together and reads them all from one snapshot (one cursor).
   */
  async createBatch(
    principal: Principal,
    body: ExportBatchCreate,
    actor: ApiAuditActor,
  ): Promise<ExportBatch> {
    for (const collection of body.collections) requireCollectionScope(principal, collection);
    const records = await this.start(
      principal,
      actor,
      body.collections.map((collection) => ({ collection, format: body.format, filters: {} })),
    );
    return {
      object: 'export_batch',
      data: records.map((record) => toExportResource(record, record.createdAt.getTime())),
    };
  }

  /** Records queued exports (a batch when more than one) and their audit entries, in one commit. */
  private async start(
    principal: Principal,
    actor: ApiAuditActor,
    asked: {
      collection: ExportCollection;
      format: ExportFormat;
      filters: Record<string, string>;
    }[],
  ): Promise<ExportRecord[]> {
    const now = this.clock.now();
    // Ids are ordered by time; the batch is named after its first export.
    const ids = asked.map(() => newId('export', now.getTime())).sort();
    const records = asked.map(({ collection, format, filters }, index): ExportRecord => ({
      id: ids[index]!,
      organizationId: principal.organizationId,
      collection,
      format,
      filters: JSON.stringify(filters),
      status: 'queued',
      rowCount: 0,
      sizeBytes: null,
      cursor: null,
      error: null,
      batchId: asked.length > 1 ? ids[0]! : null,
      leaseUntil: null,
      claimToken: null,
      createdAt: now,
      completedAt: null,
      expiresAt: null,
    }));
    await this.transactions.run(async (manager) => {
      await manager.insert(ExportRecord, records);
      for (const record of records) {
        await this.audit.record(
          actor,
          {
            action: 'export.created',
            targetType: 'export',
            targetId: record.id,
            changes: {
              collection: record.collection,
              format: record.format,
              filters: JSON.parse(record.filters) as Record<string, string>,
            },
          },
          manager,
        );
      }
      this.transactions.afterCommit(manager, () => this.runner.kick());
    });
    return records;
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
}
