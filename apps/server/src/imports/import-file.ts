import { createHash, type Hash } from 'node:crypto';
import { TextDecoder } from 'node:util';
import { type Readable, Transform, type TransformCallback } from 'node:stream';
import { parse } from 'csv-parse';
import {
  IMPORT_ITEM_SCHEMAS,
  IMPORT_MAX_ROWS,
  type ImportCollection,
  type ImportFormat,
} from '@platform/contract';
import { z } from 'zod';
import { zodErrors } from '../common/problem-details.filter';
import { ProblemException } from '../common/problem.exception';

/** One record of a file as read: the item to apply, or the problems that keep it from applying. */
export interface ReadRow {
  /** From 1, the file's records in order (a CSV's header is not one; blank lines are skipped). */
  row: number;
  externalId: string | null;
  item: Record<string, unknown> | null;
  problems: { field: string; code: string; problem: string }[];
}

/**
 * The records of an uploaded file, one at a time as the bytes arrive (the file is never held
 * whole), each checked against the collection's batch item; `hash` takes every byte, for the
 * Idempotency-Key's fingerprint.
 */
export async function* readRows(
  stream: Readable,
  format: ImportFormat,
  collection: ImportCollection,
  hash: Hash,
): AsyncGenerator<ReadRow> {
  const schema = IMPORT_ITEM_SCHEMAS[collection] as unknown as z.AnyZodObject;
  const tapped = stream.pipe(hashing(hash));
  stream.once('error', (error) => tapped.destroy(error));
  const values = format === 'csv' ? csvRecords(tapped, schema) : ndjsonRecords(tapped);
  let row = 0;
  for await (const value of values) {
    row += 1;
    if (row > IMPORT_MAX_ROWS) {
      throw new ProblemException(
        'payload_too_large',
        `An import takes at most ${IMPORT_MAX_ROWS.toLocaleString('en')} rows; split the file`,
      );
    }
    yield checkedRow(row, value, schema);
  }
}

function hashing(hash: Hash): Transform {
  return new Transform({
    transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback) {
      hash.update(chunk);
      done(null, chunk);
    },
  });
}

/** A record that could not be read at all: its problem instead of its value. */
class Unreadable {
  constructor(readonly problem: string) {}
}

async function* ndjsonRecords(stream: Readable): AsyncGenerator<unknown> {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let pending = '';
  const parseLine = (line: string): unknown => {
    try {
      return JSON.parse(line) as unknown;
    } catch {
      return new Unreadable('is not valid JSON');
    }
  };
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    pending += decodeUtf8(decoder, chunk, true);
    const lines = pending.split('\n');
    pending = lines.pop()!;
    for (const line of lines) if (line.trim() !== '') yield parseLine(line);
  }
  pending += decodeUtf8(decoder, new Uint8Array(), false);
  if (pending.trim() !== '') yield parseLine(pending);
}

function decodeUtf8(decoder: TextDecoder, bytes: Uint8Array, stream: boolean): string {
  try {
    return decoder.decode(bytes, { stream });
  } catch {
    throw new ProblemException('validation_error', 'The file is not valid UTF-8', {
      errors: [{ path: 'body.file', message: 'is not valid UTF-8', code: 'invalid_encoding' }],
    });
  }
}

/**
 * A CSV's records as objects of its header's field names. An empty cell sends nothing; a cell
 * under a number or boolean field is read as one (`12`, `true`), so the item's own check judges it.
 */
async function* csvRecords(stream: Readable, schema: z.AnyZodObject): AsyncGenerator<unknown> {
  const parser = stream.pipe(
    parse({ columns: true, bom: true, skip_empty_lines: true, relax_column_count: true }),
  );
  stream.once('error', (error) => parser.destroy(error));
  const kinds = new Map<string, string>();
  try {
    for await (const record of parser as AsyncIterable<Record<string, string>>) {
      const value: Record<string, unknown> = {};
      for (const [field, cell] of Object.entries(record)) {
        if (cell === '' || cell === undefined) continue;
        const shape = schema.shape as Record<string, z.ZodTypeAny | undefined>;
        if (!kinds.has(field)) kinds.set(field, baseKind(shape[field]));
        value[field] = fromCell(cell, kinds.get(field)!);
      }
      yield value;
    }
  } catch (error) {
    if (error instanceof ProblemException) throw error;
    const code = (error as { code?: unknown }).code;
    if (typeof code !== 'string' || !code.startsWith('CSV_')) throw error;
    const line = (error as { lines?: number }).lines;
    throw new ProblemException(
      'validation_error',
      `The CSV file cannot be read${line ? ` (at line ${line})` : ''}: ${(error as Error).message.replace(/^Invalid [^:]*: /, '')}`,
    );
  }
}

/** A field's type under its wrappers (optional, nullable, default, refinements). */
function baseKind(schema: z.ZodTypeAny | undefined): string {
  let current = schema;
  for (;;) {
    if (current instanceof z.ZodOptional || current instanceof z.ZodNullable) {
      current = current.unwrap() as z.ZodTypeAny;
    } else if (current instanceof z.ZodDefault) {
      current = current.removeDefault() as z.ZodTypeAny;
    } else if (current instanceof z.ZodEffects) {
      current = current.innerType() as z.ZodTypeAny;
    } else {
      return current instanceof z.ZodNumber
        ? 'number'
        : current instanceof z.ZodBoolean
          ? 'boolean'
          : 'string';
    }
  }
}

function fromCell(cell: string, kind: string): unknown {
  if (kind === 'number' && cell.trim() !== '' && Number.isFinite(Number(cell))) return Number(cell);
  if (kind === 'boolean' && (cell === 'true' || cell === 'false')) return cell === 'true';
  return cell;
}

/** A record checked against the collection's batch item (`schema`): the item, or its problems. */
export function checkedRow(row: number, value: unknown, schema: z.AnyZodObject): ReadRow {
  if (value instanceof Unreadable) {
    return { row, externalId: null, item: null, problems: [problem('', 'invalid', value.problem)] };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    const p = problem('', 'invalid_type', 'is not an object of fields');
    return { row, externalId: null, item: null, problems: [p] };
  }
  const raw = (value as Record<string, unknown>).external_id;
  const parsed = schema.safeParse(value);
  const externalId = parsed.success ? (parsed.data.external_id as string) : readableId(raw);
  if (parsed.success) return { row, externalId, item: parsed.data, problems: [] };
  const problems = zodErrors('body', parsed.error).map((e) =>
    problem(e.path.replace(/^body\.?/, ''), e.code, e.message),
  );
  return { row, externalId, item: null, problems };
}

/** The row's external id when it is one a record could have, else null. */
function readableId(raw: unknown): string | null {
  if (typeof raw !== 'string') return null;
  const id = IMPORT_ITEM_SCHEMAS.students.shape.external_id.safeParse(raw);
  return id.success ? id.data : null;
}

function problem(field: string, code: string, text: string) {
  return { field, code, problem: text.slice(0, 1000) };
}

/** A fresh SHA-256 for a file's bytes. */
export function fileHash(): Hash {
  return createHash('sha256');
}
