import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { TransactionRunner } from '../common/transactions';
import { Sql } from '../database/sql';

/** How much of a file one chunk holds: a download holds about one chunk in memory at a time. */
export const EXPORT_CHUNK_BYTES = 1 << 20;

/**
 * Export files as numbered chunks in the database (`export_chunks`): every instance of the
 * scale-out deployment reads the same file, and the embedded default needs no directory besides
 * its database file. See docs/decisions/0018-export-storage.md.
 */
@Injectable()
export class ExportFiles {
  constructor(
    private readonly sql: Sql,
    private readonly transactions: TransactionRunner,
  ) {}

  /**
   * Writes chunk `seq` of the file of `exportId`, committed when this resolves, with whatever
   * `alongside` writes in the same transaction (the export's progress).
   */
  append(
    exportId: string,
    seq: number,
    data: Buffer,
    alongside?: (manager: EntityManager) => Promise<unknown>,
  ): Promise<void> {
    return this.transactions.run(async (manager) => {
      await this.sql.query(
        manager,
        'INSERT INTO export_chunks (export_id, seq, data) VALUES (:exportId, :seq, :data)',
        { exportId, seq, data },
      );
      await alongside?.(manager);
    });
  }

  /** The file's chunks in order, read one at a time. */
  async *read(exportId: string): AsyncGenerator<Buffer> {
    for (let seq = 0; ; seq += 1) {
      const [row] = await this.sql.select<{ data: Buffer | Uint8Array }>(
        'SELECT data FROM export_chunks WHERE export_id = :exportId AND seq = :seq',
        { exportId, seq },
      );
      if (!row) return;
      yield Buffer.isBuffer(row.data) ? row.data : Buffer.from(row.data);
    }
  }

  /** Deletes the file (all its chunks), with whatever `alongside` writes in the same transaction. */
  delete(
    exportId: string,
    alongside?: (manager: EntityManager) => Promise<unknown>,
  ): Promise<void> {
    return this.transactions.run(async (manager) => {
      await this.sql.query(manager, 'DELETE FROM export_chunks WHERE export_id = :exportId', {
        exportId,
      });
      await alongside?.(manager);
    });
  }
}

/**
 * Writes a file's lines into chunks of EXPORT_CHUNK_BYTES through one buffer for every chunk: an
 * export allocates no chunk-sized buffers (the drivers copy a chunk's bytes when they send it).
 */
export class ChunkWriter {
  private readonly buffer = Buffer.allocUnsafe(EXPORT_CHUNK_BYTES);
  private used = 0;
  private chunks = 0;
  /** The bytes sent so far. */
  bytes = 0;

  /** `send` writes chunk `seq` (from 0) of the file. */
  constructor(private readonly send: (seq: number, data: Buffer) => Promise<void>) {}

  /** Appends a line without awaiting when it surely fits (3 bytes a char); false when it might not. */
  tryWrite(line: string): boolean {
    if (this.buffer.length - this.used < line.length * 3) return false;
    this.used += this.buffer.write(line, this.used, 'utf8');
    return true;
  }

  /** Appends a line, sending the chunk first when the line might not fit. */
  async write(line: string): Promise<void> {
    if (this.tryWrite(line)) return;
    if (this.used > 0) await this.flush(this.buffer.subarray(0, this.used));
    this.used = 0;
    // A line longer than a chunk is a chunk of its own.
    if (line.length * 3 > this.buffer.length) return this.flush(Buffer.from(line, 'utf8'));
    this.used += this.buffer.write(line, this.used, 'utf8');
  }

  /** Sends what is left: an empty file is one empty chunk. */
  async end(): Promise<void> {
    if (this.used > 0 || this.chunks === 0) await this.flush(this.buffer.subarray(0, this.used));
  }

  private async flush(data: Buffer): Promise<void> {
    await this.send(this.chunks, data);
    this.chunks += 1;
    this.bytes += data.length;
  }
}

/** One line of NDJSON per resource. */
export function ndjsonLine(resource: Record<string, unknown>): string {
  return `${JSON.stringify(resource)}\n`;
}

/**
 * RFC 4180: a header row of the resource's fields, then one row per resource; text cells that
 * begin like a formula are neutralised (see `neutralised`).
 */
export function csvHeader(fields: readonly string[]): string {
  return `${fields.map(csvField).join(',')}\r\n`;
}

export function csvRow(fields: readonly string[], resource: Record<string, unknown>): string {
  return `${fields.map((field) => csvField(resource[field])).join(',')}\r\n`;
}

function csvField(value: unknown): string {
  if (value === null || value === undefined) return '';
  const text =
    typeof value === 'string'
      ? value
      : typeof value === 'number' || typeof value === 'boolean'
        ? String(value)
        : JSON.stringify(value);
  const cell = typeof value === 'string' ? neutralised(text) : text;
  return /[",\r\n]/.test(cell) ? `"${cell.replace(/"/g, '""')}"` : cell;
}

/** What a spreadsheet would take for the start of a formula (OWASP, CSV injection). */
const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * A text cell a spreadsheet would run as a formula (`=HYPERLINK(…)`, `@SUM(…)`, `+cmd…`) gets a
 * leading `'`, which spreadsheets show as text (docs/exports.md). Numbers and booleans the API
 * writes itself are left alone: `-5` is a number, never a formula.
 */
function neutralised(text: string): string {
  return FORMULA_START.test(text) ? `'${text}` : text;
}
