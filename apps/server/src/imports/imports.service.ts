import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import {
  contract,
  IMPORT_ERROR_COLUMNS,
  IMPORT_MAX_BYTES,
  IMPORT_REMOVALS,
  type Import,
  type ImportCollection,
  type ImportCreateQuerySchema,
  type ImportFormat,
  type ImportMode,
  type ListQuery,
  RESOURCES,
  type Scope,
} from '@platform/contract';
import busboy from 'busboy';
import type { Request } from 'express';
import type { Readable } from 'node:stream';
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
import { insertRows, Sql } from '../database/sql';
import { requestFingerprint } from '../idempotency/fingerprint';
import {
  IDEMPOTENT_REPLAYED_HEADER,
  IdempotencyService,
  parseIdempotencyKey,
} from '../idempotency/idempotency.service';
import { fileHash, readRows, type ReadRow } from './import-file';
import { ImportErrorRecord, ImportRecord, ImportRowRecord } from './import.entity';
import { ImportRunner } from './import-runner';

type ImportCreateQuery = z.output<typeof ImportCreateQuerySchema>;

/** Staged rows are written this many to a transaction while the file arrives. */
const STAGE_CHUNK = 1000;

export function toImportResource(record: ImportRecord): Import {
  return {
    id: record.id as Import['id'],
    object: 'import',
    collection: record.collection,
    mode: record.mode,
    format: record.format,
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
    },
    error: record.error,
    created_at: toIso(record.createdAt),
    completed_at: record.completedAt ? toIso(record.completedAt) : null,
  };
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
   * that fails on the way leaves nothing: its staged rows are deleted.
   */
  async create(
    principal: Principal,
    query: ImportCreateQuery,
    req: Request,
    actor: ApiAuditActor,
  ): Promise<ImportAnswer> {
    requireWriteScope(principal, query.collection);
    const mode = query.mode ?? 'upsert';
    if (mode === 'full' && !(query.collection in IMPORT_REMOVALS)) {
      throw new ProblemException(
        'validation_error',
        `A full import withdraws what the file leaves out, which ${query.collection} cannot be; import them with mode=upsert`,
        {
          errors: [
            {
              path: 'query.mode',
              message: `'full' takes ${Object.keys(IMPORT_REMOVALS).join(', ')}`,
              code: 'invalid_enum_value',
            },
          ],
        },
      );
    }
    if (!req.is('multipart/form-data')) {
      throw new ProblemException(
        'unsupported_media_type',
        `An import's file is sent as multipart/form-data (a part named 'file'), not '${req.headers['content-type'] ?? 'none'}'`,
      );
    }
    const key = parseIdempotencyKey(req.headers['idempotency-key']);
    const now = this.clock.now();
    const record = this.newRecord(principal, { ...query, mode }, now);
    await this.transactions.run((manager) => manager.insert(ImportRecord, record));
    let staged: { rows: number; failed: number; sha256: string };
    try {
      staged = await this.receive(req, record, query.format);
    } catch (error) {
      await this.discard(record.id);
      throw error;
    }
    const fingerprint = requestFingerprint('POST', req.originalUrl ?? req.url, {
      file_sha256: staged.sha256,
    });
    const answer = await this.queue(principal, record, staged, actor, key, fingerprint);
    if (answer.replayed) await this.discard(record.id);
    else this.runner.kick();
    return answer;
  }

  private newRecord(
    principal: Principal,
    query: ImportCreateQuery & { mode: ImportMode },
    now: Date,
  ): ImportRecord {
    return {
      id: newId('import', now.getTime()),
      organizationId: principal.organizationId,
      ownerUserId: principal.userId,
      collection: query.collection,
      mode: query.mode,
      format: query.format ?? 'ndjson',
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
      error: null,
      leaseUntil: null,
      claimToken: null,
      createdAt: now,
      completedAt: null,
    };
  }

  /**
   * The request's one file part, read and staged as it arrives. Anything else in the body (a
   * form field, a second file) is refused: an import's options go in the query.
   */
  private receive(
    req: Request,
    record: ImportRecord,
    format: ImportFormat | undefined,
  ): Promise<{ rows: number; failed: number; sha256: string }> {
    return new Promise((resolve, reject) => {
      let work: Promise<{ rows: number; failed: number; sha256: string }> | undefined;
      // Refused at once; the rest of the body is drained so the answer can be read.
      const refuse = (error: unknown) => {
        req.unpipe(parts);
        req.resume();
        reject(asError(error));
      };
      let parts: ReturnType<typeof busboy>;
      try {
        parts = busboy({ headers: req.headers, limits: { fileSize: IMPORT_MAX_BYTES } });
      } catch (error) {
        // A multipart Content-Type without its boundary.
        reject(unreadable(asError(error)));
        return;
      }
      parts.on('file', (name, stream, info) => {
        if (name !== 'file' || work) {
          stream.resume();
          refuse(unexpectedPart(name, work !== undefined));
          return;
        }
        try {
          record.format = format ?? formatOf(info.mimeType, info.filename);
          work = this.stage(record, stream, record.format);
        } catch (error) {
          stream.resume();
          work = Promise.reject(asError(error));
        }
        work.catch(refuse);
      });
      parts.on('field', (name) => refuse(unexpectedPart(name, false)));
      parts.on('error', (error: Error) => refuse(unreadable(error)));
      parts.on('close', () => {
        if (work) work.then(resolve, reject);
        else reject(noFilePart());
      });
      req.on('error', reject);
      req.pipe(parts);
    });
  }

  /** Reads `stream`'s records into `import_rows` (and their problems into `import_errors`). */
  private async stage(
    record: ImportRecord,
    stream: Readable & { truncated?: boolean },
    format: ImportFormat,
  ) {
    const hash = fileHash();
    let truncated = false;
    stream.once('limit', () => {
      truncated = true;
      stream.destroy(tooLarge());
    });
    let rows: ImportRowRecord[] = [];
    let errors: ImportErrorRecord[] = [];
    let count = 0;
    let failed = 0;
    const flush = async () => {
      const [r, e] = [rows, errors];
      [rows, errors] = [[], []];
      await this.transactions.run(async (manager) => {
        await insertRows(manager, ImportRowRecord, r);
        await insertRows(manager, ImportErrorRecord, e);
      });
    };
    try {
      for await (const read of readRows(stream, format, record.collection, hash)) {
        count = read.row;
        rows.push(stagedRow(record.id, read));
        if (read.problems.length > 0) failed += 1;
        errors.push(...problemRecords(record.id, read));
        if (rows.length >= STAGE_CHUNK) await flush();
      }
    } catch (error) {
      if (truncated) throw tooLarge();
      throw error;
    }
    if (truncated) throw tooLarge();
    await flush();
    return { rows: count, failed, sha256: hash.digest('hex') };
  }

  /**
   * Queues the staged import, in one commit with its audit entry and its Idempotency-Key (a
   * repeat of an earlier request answers that request's import; its own rows are dropped).
   */
  private async queue(
    principal: Principal,
    record: ImportRecord,
    staged: { rows: number; failed: number },
    actor: ApiAuditActor,
    key: string | undefined,
    fingerprint: string,
  ): Promise<ImportAnswer> {
    const organizationId = principal.organizationId;
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
      Object.assign(record, { status: 'queued', rowCount: staged.rows, failed: staged.failed });
      await manager.update(
        ImportRecord,
        { id: record.id },
        { status: 'queued', rowCount: staged.rows, failed: staged.failed, format: record.format },
      );
      await this.audit.record(
        actor,
        {
          action: 'import.created',
          targetType: 'import',
          targetId: record.id,
          changes: {
            collection: record.collection,
            mode: record.mode,
            format: record.format,
            dry_run: record.dryRun,
            rows: staged.rows,
          },
        },
        manager,
      );
      const body = toImportResource(record);
      if (begun) await this.idempotency.complete(manager, begun.claim, 202, body);
      return { status: 202 as const, body, replayed: false };
    });
  }

  private async discard(id: string): Promise<void> {
    await this.transactions.run((manager) => manager.delete(ImportRecord, { id }));
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

function unexpectedPart(name: string, another: boolean): ProblemException {
  const detail = another
    ? "An import takes one file: the body has a second part named 'file'"
    : `The body has a part named '${name}': an import's body is one part named 'file', and its options go in the query (?collection=students&mode=full)`;
  return new ProblemException('validation_error', detail, {
    errors: [{ path: `body.${name}`, message: 'is not taken', code: 'unknown_parameter' }],
  });
}

function noFilePart(): ProblemException {
  return new ProblemException('validation_error', "The body has no part named 'file'", {
    errors: [{ path: 'body.file', message: 'Required', code: 'invalid_type' }],
  });
}

function unreadable(error: Error): ProblemException {
  return new ProblemException(
    'validation_error',
    `The multipart body cannot be read: ${error.message}`,
  );
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

function formatOf(mimeType: string, filename: string | undefined): ImportFormat {
  if (/^text\/csv\b/.test(mimeType) || /\.csv$/i.test(filename ?? '')) return 'csv';
  if (/ndjson|jsonl|json-seq/.test(mimeType) || /\.(ndjson|jsonl)$/i.test(filename ?? ''))
    return 'ndjson';
  throw new ProblemException(
    'validation_error',
    `Cannot tell the file's format from its type '${mimeType}' or name; send format=csv or format=ndjson`,
    { errors: [{ path: 'query.format', message: 'Required', code: 'invalid_type' }] },
  );
}

function tooLarge(): ProblemException {
  return new ProblemException(
    'payload_too_large',
    `An import's file is at most ${IMPORT_MAX_BYTES / 1024 / 1024} MB; split it`,
  );
}

function stagedRow(importId: string, read: ReadRow): ImportRowRecord {
  return {
    importId,
    rowNumber: read.row,
    externalId: read.externalId,
    item: read.item === null ? null : JSON.stringify(read.item),
  };
}

function problemRecords(importId: string, read: ReadRow): ImportErrorRecord[] {
  return read.problems.map((p, seq) => ({
    importId,
    rowNumber: read.row,
    seq,
    externalId: read.externalId,
    field: p.field.slice(0, 200),
    code: p.code.slice(0, 64),
    problem: p.problem,
  }));
}

/** A CSV cell: quoted when it holds a comma, quote or line break; a leading =+-@ made inert. */
function csvCell(value: unknown): string {
  let text = String(value);
  if (/^[=+\-@]/.test(text)) text = `'${text}`;
  return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export { IDEMPOTENT_REPLAYED_HEADER };
