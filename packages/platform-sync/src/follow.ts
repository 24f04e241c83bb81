/**
 * Following the change feed into the tables. It reads after the smallest cursor of the mirrored
 * collections and, for each collection, skips the changes at or below its own cursor (a change
 * its snapshot already holds), so the copy is exact. Each page of changes is applied in one
 * transaction with every collection's new cursor: stopped at any moment, nothing is lost and
 * nothing is applied twice.
 */
import { type Event, FeedFollower, type FeedPage } from '@platform/client';
import { RESOURCES, type ResourceName } from '@platform/contract';
import type { MirrorContext } from './context';
import { formatCount, Meter } from './log';
import type { TableSpec } from './schema';
import { type CollectionState, deleteRows, readStates, upsertRows, writeState } from './tables';

export interface FollowRun {
  /** Stop once every collection is at this cursor (a checksum's), instead of reading on. */
  until?: string;
  /** Stop once a read finds nothing new. */
  untilCaughtUp?: boolean;
}

/** Changes per read. */
const PAGE_LIMIT = 1000;

/**
 * The position a cursor names: the number before its dot (`42.Xk3…`), the part the API documents
 * as comparable between cursors of one organization; `0` is the start of the feed.
 */
function position(cursor: string | null): bigint {
  return cursor === null ? -1n : BigInt(cursor.split('.')[0]!);
}

function maxCursor(a: string | null, b: string): string {
  return position(a) >= position(b) ? (a as string) : b;
}

/** The smallest cursor of the ready collections: where the feed is read from. */
export function followStart(states: readonly CollectionState[]): string {
  let smallest: CollectionState | undefined;
  for (const state of states) {
    if (smallest === undefined || position(state.cursor) < position(smallest.cursor))
      smallest = state;
  }
  if (smallest?.cursor == null) throw new Error('No collection has a loaded snapshot to follow');
  return smallest.cursor;
}

type Operation = { upsert: Record<string, unknown> } | { delete: true };

/** The last change of each record in `events` that its collection does not hold yet, by table. */
export function pendingChanges(
  events: readonly Event[],
  tables: ReadonlyMap<string, TableSpec>,
  states: ReadonlyMap<string, CollectionState>,
): Map<TableSpec, Map<string, Operation>> {
  const bySingular = new Map([...tables.values()].map((spec) => [spec.singular, spec]));
  const changes = new Map<TableSpec, Map<string, Operation>>();
  for (const event of events) {
    const dot = event.type.lastIndexOf('.');
    const spec = bySingular.get(event.type.slice(0, dot));
    if (spec === undefined || event.position === null) continue;
    if (BigInt(event.position) <= position(states.get(spec.name)?.cursor ?? null)) continue;
    const data = event.data as unknown as Record<string, unknown>;
    const id = String(data.id);
    let table = changes.get(spec);
    if (table === undefined) changes.set(spec, (table = new Map<string, Operation>()));
    table.delete(id); // keep the order of last changes
    table.set(id, event.type.endsWith('.deleted') ? { delete: true } : { upsert: data });
  }
  return changes;
}

/** Applies one page and moves every collection's cursor to `cursor`, in one transaction. */
async function applyPage(
  ctx: MirrorContext,
  states: Map<string, CollectionState>,
  events: readonly Event[],
  cursor: string,
): Promise<number> {
  const changes = pendingChanges(events, ctx.tables, states);
  let applied = 0;
  await ctx.db.transaction(async (tx) => {
    for (const [spec, operations] of changes) {
      const upserts: Record<string, unknown>[] = [];
      const deletes: string[] = [];
      for (const [id, operation] of operations) {
        if ('delete' in operation) deletes.push(id);
        else upserts.push(operation.upsert);
      }
      await deleteRows(tx, ctx.db.dialect, spec, deletes);
      await upsertRows(tx, ctx.db.dialect, spec, upserts);
      applied += operations.size;
    }
    for (const state of states.values()) {
      const next = maxCursor(state.cursor, cursor);
      if (next === state.cursor) continue;
      await writeState(tx, ctx.db.dialect, { ...state, cursor: next });
    }
  });
  for (const [name, state] of states)
    states.set(name, { ...state, cursor: maxCursor(state.cursor, cursor) });
  return applied;
}

/** The event types of the mirrored collections, as the feed's `type` filter. */
function typeFilter(ctx: MirrorContext): string {
  return [...ctx.tables.keys()]
    .flatMap((name) => {
      const { singular, events } = RESOURCES[name as ResourceName];
      return events.map((event) => `${singular}.${event}`);
    })
    .join(',');
}

/**
 * Follows the feed until the signal, `until` or (with `untilCaughtUp`) the end of what is
 * committed. Answers the cursor every collection is at.
 */
export async function followFeed(ctx: MirrorContext, run: FollowRun = {}): Promise<string> {
  const all = await readStates(ctx.db);
  const states = new Map([...ctx.tables.keys()].map((name) => [name, all.get(name)!]));
  const after = followStart([...states.values()]);
  if (run.until !== undefined && position(after) >= position(run.until)) return after;
  ctx.log.info(`following the change feed after cursor ${after}`);
  const meter = new Meter(
    ctx.log,
    (total, perSecond) =>
      `${formatCount(total)} changes applied, at cursor ${followStart([...states.values()])} (${formatCount(perSecond)} changes/s)`,
  );
  let remaining = 0;
  const follower = new FeedFollower<Event>(
    async (query, signal) => {
      const page: FeedPage<Event> = await ctx.client.events.changes(
        { query, ...(signal && { fetchOptions: { signal } }) },
        { maxRetries: 0 },
      );
      remaining = page.data.length;
      return page;
    },
    {
      after,
      ...(run.until !== undefined && { until: run.until }),
      limit: PAGE_LIMIT,
      type: typeFilter(ctx),
      untilCaughtUp: run.untilCaughtUp ?? false,
      signal: ctx.signal,
      onRetry: (error, attempt, delay) =>
        ctx.log.info(
          `reading the feed failed (${error.message}); retry ${attempt} in ${delay.toFixed(1)} s`,
        ),
    },
  );
  let page: Event[] = [];
  for await (const event of follower) {
    page.push(event);
    remaining -= 1;
    if (remaining > 0) continue;
    meter.add(await applyPage(ctx, states, page, follower.cursor));
    page = [];
    if (ctx.signal.aborted) break;
  }
  // Reads that found nothing of ours still moved the cursor.
  if (page.length > 0 || position(follower.cursor) > position(followStart([...states.values()])))
    await applyPage(ctx, states, page, follower.cursor);
  meter.add(0, true);
  return followStart([...states.values()]);
}
