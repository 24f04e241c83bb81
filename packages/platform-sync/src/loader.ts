/**
 * Loads an NDJSON export file (one record per line, as the API returns it) into a table: batched
 * multi-row upserts, each batch in its own transaction with whatever the caller records next to
 * it (the mirror: how many rows of the file are in), so a load stopped at any moment resumes
 * after the last committed batch.
 */
import type { MirrorDatabase, SqlExecutor } from './database';
import type { TableSpec } from './schema';
import { upsertRows } from './tables';

/** Records per transaction unless told otherwise. */
export const DEFAULT_BATCH_ROWS = 5000;

/** Each line of an NDJSON byte stream, parsed; blank lines are skipped. */
export async function* ndjsonRecords(
  chunks: AsyncIterable<Uint8Array | string>,
): AsyncGenerator<Record<string, unknown>> {
  const decoder = new TextDecoder();
  let rest = '';
  for await (const chunk of chunks) {
    rest += typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
    let newline = rest.indexOf('\n');
    let start = 0;
    while (newline !== -1) {
      const line = rest.slice(start, newline);
      if (line.trim() !== '') yield JSON.parse(line) as Record<string, unknown>;
      start = newline + 1;
      newline = rest.indexOf('\n', start);
    }
    rest = rest.slice(start);
  }
  rest += decoder.decode();
  if (rest.trim() !== '') yield JSON.parse(rest) as Record<string, unknown>;
}

export interface LoadOptions {
  /** Records of the file already loaded: skipped. */
  skip?: number;
  /** Records per transaction. Default 5000. */
  batchRows?: number;
  /** Stops after the batch under way is committed. */
  signal?: AbortSignal;
  /** Runs inside each batch's transaction, after its rows, with the records loaded so far. */
  onBatch?: (tx: SqlExecutor, loaded: number) => Promise<void>;
  /** Called after each committed batch. */
  onProgress?: (loaded: number) => void;
}

export interface LoadResult {
  /** Records of the file now loaded, the skipped ones included. */
  loaded: number;
  /** False when the signal stopped the load before the end of the file. */
  complete: boolean;
}

/** Loads `records` into `spec`'s table. */
export async function loadRecords(
  db: MirrorDatabase,
  spec: TableSpec,
  records: AsyncIterable<Record<string, unknown>>,
  options: LoadOptions = {},
): Promise<LoadResult> {
  const batchRows = options.batchRows ?? DEFAULT_BATCH_ROWS;
  const skip = options.skip ?? 0;
  let seen = 0;
  let loaded = skip;
  let batch: Record<string, unknown>[] = [];
  const commit = async () => {
    const rows = batch;
    batch = [];
    await db.transaction(async (tx) => {
      await upsertRows(tx, db.dialect, spec, rows);
      await options.onBatch?.(tx, loaded + rows.length);
    });
    loaded += rows.length;
    options.onProgress?.(loaded);
  };
  for await (const record of records) {
    seen += 1;
    if (seen <= skip) continue;
    batch.push(record);
    if (batch.length >= batchRows) {
      await commit();
      if (options.signal?.aborted) return { loaded, complete: false };
    }
  }
  if (batch.length > 0 || loaded === skip) await commit();
  return { loaded, complete: true };
}

/** Loads an NDJSON byte stream into `spec`'s table. */
export function loadNdjson(
  db: MirrorDatabase,
  spec: TableSpec,
  chunks: AsyncIterable<Uint8Array | string>,
  options: LoadOptions = {},
): Promise<LoadResult> {
  return loadRecords(db, spec, ndjsonRecords(chunks), options);
}
