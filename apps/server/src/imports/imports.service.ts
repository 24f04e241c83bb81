import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import {
  contract,
  IMPORT_ERROR_COLUMNS,
  IMPORT_REMOVALS,
  type Import,
  type ImportCollection,
  type ImportCreateQuerySchema,
  type ImportFormat,
  type ListQuery,
  RESOURCES,
  type Scope,
} from '@platform/contract';
import type { Request } from 'express';
import type { Hash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { In, type Repository } from 'typeorm';
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
import { Sql } from '../database/sql';
import { requestFingerprint } from '../idempotency/fingerprint';
import {
  IDEMPOTENT_REPLAYED_HEADER,
  IdempotencyService,
  parseIdempotencyKey,
} from '../idempotency/idempotency.service';
import { fileHash, readRows } from './import-file';
import { ImportRecord } from './import.entity';
import { ImportRunner } from './import-runner';
import { type Staged, stageRows } from './import-staging';
import { formatOf, receiveFile } from './import-upload';
import { withBundle } from './oneroster';

type ImportCreateQuery = z.output<typeof ImportCreateQuerySchema>;

export function toImportResource(record: ImportRecord): Import {
  return {
    id: record.id as Import['id'],
    object: 'import',
    collection: record.collection,
    mode: record.mode,
    format: formatShown(record),
    dry_run: record.dryRun,
    change_threshold: record.changeThreshold,
    confirmed: record.confirmed,
    status: record.status === 'receiving' ? 'queued' : record.status,
    rows: record.rowCount,
    rows_processed: record.nextRow - 1,
    counts: {
      created: record.created,
      updated: record.updated,
      unchanged: record.unchanged,
      failed: record.failed,
      withdrawn: record.withdrawn,
      skipped: record.skipped,
    },
    error: record.error,
    bundle:
      record.bundle === null
        ? null
        : {
            file: record.sourceFile ?? '',
            imports: record.bundle.split(',') as Import['id'][],
          },
    created_at: toIso(record.createdAt),
    completed_at: record.completedAt ? toIso(record.completedAt) : null,
  };
}

/** A bundle's imports are CSV files of one collection each, shown as the bundle's format. */
function formatShown(record: ImportRecord): ImportFormat {
  return record.bundle === null ? record.format : 'oneroster';
}

/** The query's own contradictions, refused before the file is read. */
function checkQuery(principal: Principal, query: ImportCreateQuery): void {
  if (query.format === 'oneroster' && query.collection !== undefined) {
    throw bundleWithCollection();
  }
  if (query.collection !== undefined) requireWriteScope(principal, query.collection);
  if (query.mode === undefined) return;
  if (query.collection === undefined && query.format !== 'oneroster') {
    throw collectionRequired(query.format ?? 'csv');
  }
  if (query.collection === undefined) {
    throw queryProblem(
      'mode',
      "A OneRoster bundle's manifest says bulk (full) or delta (upsert) for each file: send no mode",
      'unknown_parameter',
    );
  }
  if (query.mode === 'full' && !(query.collection in IMPORT_REMOVALS)) {
    throw queryProblem(
      'mode',
      `A full import withdraws what the file leaves out, which ${query.collection} cannot be; import them with mode=upsert`,
      'invalid_enum_value',
      `'full' takes ${Object.keys(IMPORT_REMOVALS).join(', ')}`,
    );
  }
}

function bundleWithCollection(): ProblemException {
  return queryProblem(
    'collection',
    'A OneRoster bundle names its files in its manifest: send no collection',
    'unknown_parameter',
  );
}

function collectionRequired(format: ImportFormat): ProblemException {
  return queryProblem(
    'collection',
    `A ${format} file holds one collection: send collection=students (or another)`,
    'invalid_type',
    'Required',
  );
}

function queryProblem(
  field: string,
  detail: string,
  code: string,
  message = detail,
): ProblemException {
  return new ProblemException('validation_error', detail, {
    errors: [{ path: `query.${field}`, message, code }],
  });
}

/** The scope that writes a collection: an import of it needs that too. */
function writeScope(collection: ImportCollection): Scope {
  return `${RESOURCES[collection].scope}:write` as Scope;
}

function requireWriteScope(principal: Principal, collection: ImportCollection): void {
  const scope = writeScope(collection);
  if (principal.scopes.has(scope)) return;
  throw new ProblemException(
    'insufficient_scope',
    `Importing ${collection} requires the '${scope}' scope`,
    {
      headers: {
        'WWW-Authenticate': `Bearer realm="platform", error="insufficient_scope", scope="${scope}"`,
      },
    },
  );
}

/** What answers a POST: the import, and whether it is the replay of an earlier request's. */
export interface ImportAnswer {
  status: 202;
  body: Import;
  replayed: boolean;
}

/**
 * Imports over the API: reading a file in (staged in `import_rows` before the 202), listing,
 * and the error report. ImportRunner applies them in the background.
 */
@Injectable()
export class ImportsService {
  private readonly listed: ListCollection<ImportRecord>;

  constructor(
    @InjectRepository(ImportRecord) private readonly imports: Repository<ImportRecord>,
    private readonly sql: Sql,
    private readonly transactions: TransactionRunner,
    private readonly clock: Clock,
    private readonly audit: AuditService,
    private readonly idempotency: IdempotencyService,
    private readonly runner: ImportRunner,
  ) {
    // An import's `updated_since` reads its creation time, as an export's does.
    this.listed = ListCollection.of(sql, imports, contract.imports.list.query, {
      updated_at: 'created_at',
    });
  }

  /**
   * Reads the request's file into staged rows, then queues the import in one commit with its
   * audit entry (and its Idempotency-Key, whose fingerprint covers the file's bytes). A request
   * that fails on the way leaves nothing: its staged rows are deleted. A OneRoster bundle
   * becomes one import per file it applies.
   */
  async create(
    principal: Principal,
    query: ImportCreateQuery,
    req: Request,
    actor: ApiAuditActor,
  ): Promise<ImportAnswer> {
    checkQuery(principal, query);
    if (!req.is('multipart/form-data')) {
      throw new ProblemException(
        'unsupported_media_type',
        `An import's file is sent as multipart/form-data (a part named 'file'), not '${req.headers['content-type'] ?? 'none'}'`,
      );
    }
    const key = parseIdempotencyKey(req.headers['idempotency-key']);
    const now = this.clock.now();
    const records: ImportRecord[] = [];
    const hash = fileHash();
    let staged: Staged[];
    try {
      staged = await receiveFile(req, async (part) => {
        const format = query.format ?? formatOf(part.mimeType, part.filename);
        if (format === 'oneroster') {
          if (query.collection !== undefined) throw bundleWithCollection();
          return this.stageBundle(principal, query, part.stream, hash, now, records);
        }
        if (query.collection === undefined) throw collectionRequired(format);
        const record = this.newRecord(principal, query, query.collection, now);
        Object.assign(record, { format, mode: query.mode ?? 'upsert' });
        await this.insert(records, record);
        const reads = readRows(part.stream, format, query.collection, hash);
        return [await stageRows(this.transactions, record.id, reads)];
      });
    } catch (error) {
      await this.discard(records);
      throw error;
    }
    const fingerprint = requestFingerprint('POST', req.originalUrl ?? req.url, {
      file_sha256: hash.digest('hex'),
    });
    const answer = await this.queue(records, staged, actor, key, fingerprint);
    if (answer.replayed) await this.discard(records);
    else this.runner.kick();
    return answer;
  }

  /** A bundle's imports, one per file it applies, each staged from its file; chained in order. */
  private async stageBundle(
    principal: Principal,
    query: ImportCreateQuery,
    stream: Readable,
    hash: Hash,
    now: Date,
    records: ImportRecord[],
  ): Promise<Staged[]> {
    const lookups = {
      studentExists: async (externalId: string) =>
        (
          await this.sql.select(
            `SELECT 1 AS one FROM students WHERE organization_id = :org AND external_id = :id`,
            { org: principal.organizationId, id: externalId },
          )
        ).length > 0,
    };
    return withBundle(stream, hash, lookups, async (bundle) => {
      for (const part of bundle.parts) requireWriteScope(principal, part.collection);
      const chain = bundle.parts.map((part) => ({
        ...this.newRecord(principal, query, part.collection, now),
        mode: part.mode,
        format: 'csv' as const,
        sourceFile: part.file,
      }));
      const ids = chain.map((record) => record.id).join(',');
      const staged: Staged[] = [];
      for (const [index, record] of chain.entries()) {
        record.bundle = ids;
        record.afterImportId = index === 0 ? null : chain[index - 1]!.id;
        await this.insert(records, record);
        const notes =
          index === 0 ? bundle.notes.map((n) => ({ field: n.file, problem: n.problem })) : [];
        staged.push(
          await stageRows(this.transactions, record.id, bundle.parts[index]!.rows(), notes),
        );
      }
      return staged;
    });
  }

  private async insert(records: ImportRecord[], record: ImportRecord): Promise<void> {
    records.push(record);
    await this.transactions.run((manager) => manager.insert(ImportRecord, record));
  }

  private newRecord(
    principal: Principal,
    query: ImportCreateQuery,
    collection: ImportCollection,
    now: Date,
  ): ImportRecord {
    return {
      id: newId('import', now.getTime()),
      organizationId: principal.organizationId,
      ownerUserId: principal.userId,
      collection,
      mode: 'upsert',
      format: 'ndjson',
      dryRun: query.dry_run ?? false,
      changeThreshold: query.change_threshold,
      confirmed: query.confirm ?? false,
      status: 'receiving',
      phase: 'upsert',
      rowCount: 0,
      nextRow: 1,
      withdrawnThrough: null,
      created: 0,
      updated: 0,
      unchanged: 0,
      failed: 0,
      withdrawn: 0,
      skipped: 0,
      bundle: null,
      sourceFile: null,
      afterImportId: null,
      error: null,
      leaseUntil: null,
      claimToken: null,
      createdAt: now,
      completedAt: null,
    };
  }

  /**
   * Queues the staged imports, in one commit with their audit entries and the Idempotency-Key
   * (a repeat of an earlier request answers that request's import; its own rows are dropped).
   * The answer is the first import (a bundle's first).
   */
  private async queue(
    records: ImportRecord[],
    staged: Staged[],
    actor: ApiAuditActor,
    key: string | undefined,
    fingerprint: string,
  ): Promise<ImportAnswer> {
    const organizationId = records[0]!.organizationId;
    if (key !== undefined) {
      const stored = await this.idempotency.stored(organizationId, key, fingerprint);
      if (stored) return { status: 202, body: stored.body as Import, replayed: true };
    }
    return this.transactions.run(async (manager) => {
      const begun =
        key === undefined
          ? undefined
          : await this.idempotency.begin(manager, organizationId, key, fingerprint);
      if (begun?.kind === 'replay') {
        return { status: 202 as const, body: begun.body as Import, replayed: true };
      }
      for (const [index, record] of records.entries()) {
        const { rows, failed, skipped } = staged[index]!;
        const queued = { status: 'queued' as const, rowCount: rows, failed, skipped };
        Object.assign(record, queued);
        await manager.update(ImportRecord, { id: record.id }, queued);
        await this.audit.record(
          actor,
          {
            action: 'import.created',
            targetType: 'import',
            targetId: record.id,
            changes: {
              collection: record.collection,
              mode: record.mode,
              format: formatShown(record),
              dry_run: record.dryRun,
              rows,
            },
          },
          manager,
        );
      }
      const body = toImportResource(records[0]!);
      if (begun) await this.idempotency.complete(manager, begun.claim, 202, body);
      return { status: 202 as const, body, replayed: false };
    });
  }

  private async discard(records: readonly ImportRecord[]): Promise<void> {
    if (records.length === 0) return;
    const ids = records.map((record) => record.id);
    await this.transactions.run((manager) => manager.delete(ImportRecord, { id: In(ids) }));
  }

  async list(principal: Principal, query: ListQuery, url: PageUrl) {
    const scoped: ListQuery = {
      ...query,
      conditions: [
        ...query.conditions,
        { field: 'status', op: 'in', values: ['queued', 'running', 'succeeded', 'failed'] },
      ],
    };
    const { rows, total } = await this.listed.find(principal.organizationId, scoped);
    return { data: rows.map(toImportResource), ...pageEnvelope(url, query, total) };
  }

  async retrieve(principal: Principal, id: string): Promise<Import> {
    return toImportResource(await this.find(principal, id));
  }

  /** The error report, as CSV lines in row order, read a page at a time. */
  async *errorReport(principal: Principal, id: string): AsyncGenerator<string> {
    const record = await this.find(principal, id);
    yield `${IMPORT_ERROR_COLUMNS.join(',')}\n`;
    let after = { row: -1, seq: -1 };
    for (;;) {
      const page = await this.sql.select<Record<string, unknown>>(
        `SELECT row_number, seq, external_id, field, code, problem FROM import_errors
         WHERE import_id = :id AND (row_number > :row OR (row_number = :row AND seq > :seq))
         ORDER BY row_number, seq LIMIT 1000`,
        { id: record.id, row: after.row, seq: after.seq },
      );
      if (page.length === 0) return;
      yield page
        .map((e) =>
          [e.row_number === 0 ? '' : e.row_number, e.external_id ?? '', e.field, e.code, e.problem]
            .map(csvCell)
            .join(','),
        )
        .join('\n')
        .concat('\n');
      const last = page[page.length - 1]!;
      after = { row: Number(last.row_number), seq: Number(last.seq) };
    }
  }

  private async find(principal: Principal, id: string): Promise<ImportRecord> {
    const record = await this.imports.findOneBy({ id, organizationId: principal.organizationId });
    if (!record || record.status === 'receiving') throw notFound('import', id);
    return record;
  }
}

/** A CSV cell: quoted when it holds a comma, quote or line break; a leading =+-@ made inert. */
function csvCell(value: unknown): string {
  let text = String(value);
  if (/^[=+\-@]/.test(text)) text = `'${text}`;
  return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export { IDEMPOTENT_REPLAYED_HEADER };
