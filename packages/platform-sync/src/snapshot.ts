/**
 * The initial copy of the collections: exports of them all from one snapshot (one batch, NDJSON,
 * with the feed cursor of that snapshot), each loaded in batches of rows. The state row says
 * which export is being loaded and how many of its rows are in, committed with each batch: a load
 * stopped at any moment resumes after its last batch, from the same file while the export lasts.
 * Recording a new export empties its table in the same transaction, so rows deleted since an
 * earlier load do not stay.
 */
import type { Export } from '@platform/client';
import type { ExportCollection } from '@platform/contract';
import type { MirrorContext } from './context';
import { quote } from './database';
import { loadNdjson } from './loader';
import { formatCount, Meter } from './log';
import { type CollectionState, readStates, writeState } from './tables';

/** An export to load, and how many of its rows a stopped load already committed. */
interface ToLoad {
  exported: Export;
  skip: number;
}

/** A stopped load's export, while its file is kept: resumed after the rows already in. */
async function resumable(
  ctx: MirrorContext,
  collection: ExportCollection,
  state: CollectionState | undefined,
): Promise<ToLoad | undefined> {
  if (state?.status !== 'loading' || state.export_id === null) return undefined;
  const previous = await ctx.client.exports.retrieve(state.export_id);
  if (previous.status === 'succeeded') {
    ctx.log.info(
      `${collection}: resuming export ${previous.id} after ${formatCount(state.loaded_rows)} rows`,
    );
    return { exported: previous, skip: state.loaded_rows };
  }
  ctx.log.info(`${collection}: export ${previous.id} is ${previous.status}; exporting again`);
  return undefined;
}

/**
 * New exports of `collections`, as one batch: read from one snapshot, so the tables agree with
 * each other (every enrollment's student is loaded) and share one cursor. Each table is emptied
 * in the transaction that records its export, so rows deleted since an earlier load do not stay.
 */
async function exportBatch(
  ctx: MirrorContext,
  collections: ExportCollection[],
): Promise<Map<ExportCollection, ToLoad>> {
  const batch = await ctx.client.exports.createBatch({ body: { collections, format: 'ndjson' } });
  ctx.log.info(`exporting ${collections.join(', ')} from one snapshot`);
  const exported: Export[] = [];
  for (const started of batch.data) {
    exported.push(
      await ctx.client.exports.wait(started.id, { intervalMs: ctx.pollMs, signal: ctx.signal }),
    );
  }
  await ctx.db.transaction(async (tx) => {
    for (const [index, collection] of collections.entries()) {
      await tx.run(`DELETE FROM ${quote(collection)}`);
      await writeState(tx, ctx.db.dialect, {
        collection,
        cursor: exported[index]!.cursor,
        status: 'loading',
        export_id: exported[index]!.id,
        loaded_rows: 0,
      });
    }
  });
  return new Map(collections.map((c, index) => [c, { exported: exported[index]!, skip: 0 }]));
}

/** Loads one collection's export file. False when stopped (by a signal) before the end. */
async function loadSnapshot(
  ctx: MirrorContext,
  collection: ExportCollection,
  { exported, skip }: ToLoad,
): Promise<boolean> {
  const spec = ctx.tables.get(collection);
  if (spec === undefined) throw new Error(`No table for ${collection}`);
  if (ctx.signal.aborted) return false;
  const meter = new Meter(
    ctx.log,
    (total, perSecond) =>
      `${collection}: ${formatCount(skip + total)} of ${formatCount(exported.row_count)} rows loaded (${formatCount(perSecond)} rows/s)`,
  );
  const file = await ctx.client.exports.stream(exported.id, { signal: ctx.signal });
  const base = { collection, cursor: exported.cursor, export_id: exported.id };
  let last = skip;
  const result = await loadNdjson(ctx.db, spec, file as unknown as AsyncIterable<Uint8Array>, {
    skip,
    batchRows: ctx.batchRows,
    signal: ctx.signal,
    onBatch: async (tx, loaded) => {
      await writeState(tx, ctx.db.dialect, { ...base, status: 'loading', loaded_rows: loaded });
    },
    onProgress: (loaded) => {
      meter.add(loaded - last);
      last = loaded;
    },
  });
  if (!result.complete) return false;
  // A file that ends early (a cut connection the stream did not report) or holds more than the
  // export counted is not the snapshot: fail rather than follow from a partial table.
  if (result.loaded !== exported.row_count) {
    throw new Error(
      `${collection}: export ${exported.id} holds ${formatCount(exported.row_count)} rows, its file gave ${formatCount(result.loaded)}`,
    );
  }
  await ctx.db.transaction(async (tx) => {
    await writeState(tx, ctx.db.dialect, { ...base, status: 'ready', loaded_rows: result.loaded });
  });
  meter.add(0, true);
  ctx.log.info(`${collection}: snapshot loaded at cursor ${exported.cursor ?? '?'}`);
  return true;
}

/**
 * Loads every mirrored collection that has no finished snapshot: a stopped load resumes from its
 * export first (its file does not wait on a new export, and may expire meanwhile); the others
 * are then exported together, in one batch. False when stopped.
 */
export async function loadSnapshots(ctx: MirrorContext): Promise<boolean> {
  const states = await readStates(ctx.db);
  const pending = [...(ctx.tables.keys() as Iterable<ExportCollection>)].filter(
    (collection) => states.get(collection)?.status !== 'ready',
  );
  const fresh: ExportCollection[] = [];
  for (const collection of pending) {
    if (ctx.signal.aborted) return false;
    const resumed = await resumable(ctx, collection, states.get(collection));
    if (!resumed) fresh.push(collection);
    else if (!(await loadSnapshot(ctx, collection, resumed))) return false;
  }
  if (fresh.length === 0) return true;
  for (const [collection, load] of await exportBatch(ctx, fresh)) {
    if (ctx.signal.aborted) return false;
    if (!(await loadSnapshot(ctx, collection, load))) return false;
  }
  return true;
}
