/**
 * The initial copy of each collection: an export (NDJSON, read from one snapshot, with the feed
 * cursor of that snapshot) loaded in batches. The state row says which export is being loaded and
 * how many of its rows are in, committed with each batch: a load stopped at any moment resumes
 * after its last batch, from the same file while the export lasts. The first batch of a new
 * export empties the table in its transaction, so rows deleted since an earlier load do not stay.
 */
import type { Export } from '@platform/client';
import type { ExportCollection } from '@platform/contract';
import type { MirrorContext } from './context';
import { quote } from './database';
import { loadNdjson } from './loader';
import { formatCount, Meter } from './log';
import { type CollectionState, readStates, writeState } from './tables';

/** The export to load: the one a stopped load was reading, while its file is kept, or a new one. */
async function exportToLoad(
  ctx: MirrorContext,
  collection: ExportCollection,
  state: CollectionState | undefined,
): Promise<{ exported: Export; skip: number }> {
  if (state?.status === 'loading' && state.export_id !== null) {
    const previous = await ctx.client.exports.retrieve(state.export_id);
    if (previous.status === 'succeeded') {
      ctx.log.info(
        `${collection}: resuming export ${previous.id} after ${formatCount(state.loaded_rows)} rows`,
      );
      return { exported: previous, skip: state.loaded_rows };
    }
    ctx.log.info(`${collection}: export ${previous.id} is ${previous.status}; exporting again`);
  }
  const started = await ctx.client.exports.create({ body: { collection, format: 'ndjson' } });
  ctx.log.info(`${collection}: exporting (${started.id})`);
  const exported = await ctx.client.exports.wait(started.id, {
    intervalMs: ctx.pollMs,
    signal: ctx.signal,
  });
  await ctx.db.transaction(async (tx) => {
    await tx.run(`DELETE FROM ${quote(collection)}`);
    await writeState(tx, ctx.db.dialect, {
      collection,
      cursor: exported.cursor,
      status: 'loading',
      export_id: exported.id,
      loaded_rows: 0,
    });
  });
  return { exported, skip: 0 };
}

/** Loads one collection's snapshot. False when stopped (by a signal) before the end. */
export async function loadSnapshot(
  ctx: MirrorContext,
  collection: ExportCollection,
  state: CollectionState | undefined,
): Promise<boolean> {
  const spec = ctx.tables.get(collection);
  if (spec === undefined) throw new Error(`No table for ${collection}`);
  const { exported, skip } = await exportToLoad(ctx, collection, state);
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
  await ctx.db.transaction(async (tx) => {
    await writeState(tx, ctx.db.dialect, { ...base, status: 'ready', loaded_rows: result.loaded });
  });
  meter.add(0, true);
  ctx.log.info(`${collection}: snapshot loaded at cursor ${exported.cursor ?? '?'}`);
  return true;
}

/** Loads every mirrored collection that has no finished snapshot. False when stopped. */
export async function loadSnapshots(ctx: MirrorContext): Promise<boolean> {
  const states = await readStates(ctx.db);
  for (const collection of ctx.tables.keys() as Iterable<ExportCollection>) {
    const state = states.get(collection);
    if (state?.status === 'ready') continue;
    if (!(await loadSnapshot(ctx, collection, state))) return false;
    if (ctx.signal.aborted) return false;
  }
  return true;
}
