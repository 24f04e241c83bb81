/**
 * One run of the mirror: the tables from the contract, each collection's snapshot where it has
 * none, then the change feed (for ever, until caught up with `once`, or up to the checksums'
 * cursor with `verify`).
 */
import { createClient, PlatformCursorExpiredError } from '@platform/client';
import type { ExportCollection } from '@platform/contract';
import type { MirrorContext } from './context';
import { describeDatabase, type MirrorDatabase, openDatabase } from './database';
import { followFeed } from './follow';
import { DEFAULT_BATCH_ROWS } from './loader';
import type { Logger } from './log';
import { collectionTable } from './schema';
import { loadSnapshots } from './snapshot';
import { ensureTables, readStates, writeState } from './tables';
import { verifyMirror } from './verify';

export interface MirrorOptions {
  database: string;
  baseUrl: string;
  token: string;
  collections: readonly ExportCollection[];
  /** Stop once caught up instead of following for ever. */
  once?: boolean;
  /** Bring the mirror to the checksums' cursor, compare, and stop. */
  verify?: boolean;
  /** On `410 cursor_expired`, load every collection again from a new export. */
  resnapshotOnExpiry?: boolean;
  batchRows?: number;
  pollMs?: number;
  signal: AbortSignal;
  log: Logger;
}

/** Exit codes: what a scheduler or a script can tell apart. */
export const EXIT = { ok: 0, mismatch: 1, usage: 2, cursorExpired: 3, failed: 4 } as const;

export const EXPIRED_ADVICE =
  "the change feed no longer holds the changes after the mirror's cursor (410 cursor_expired: it fell more than the retention behind). Run again with --resnapshot-on-expiry to load every collection again from a new export.";

/**
 * Marks every collection to be loaded again: its rows stay until its new export is ready (the
 * transaction that records the export empties its table).
 */
async function markStale(ctx: MirrorContext): Promise<void> {
  const states = await readStates(ctx.db);
  await ctx.db.transaction(async (tx) => {
    for (const name of ctx.tables.keys()) {
      const state = states.get(name);
      if (state) await writeState(tx, ctx.db.dialect, { ...state, status: 'stale' });
    }
  });
}

async function prepare(db: MirrorDatabase, options: MirrorOptions): Promise<MirrorContext> {
  const tables = new Map(options.collections.map((name) => [name, collectionTable(name)]));
  const ctx: MirrorContext = {
    db,
    client: createClient({
      baseUrl: options.baseUrl,
      token: options.token,
      userAgent: 'platform-sync',
    }),
    tables,
    log: options.log,
    signal: options.signal,
    batchRows: options.batchRows ?? DEFAULT_BATCH_ROWS,
    pollMs: options.pollMs ?? 1000,
  };
  const widened = await ensureTables(db, [...tables.values()]);
  if (widened.size > 0) {
    const states = await readStates(db);
    await db.transaction(async (tx) => {
      for (const [name, columns] of widened) {
        options.log.info(
          `${name}: new columns ${columns.join(', ')}; loading it again to fill them`,
        );
        const state = states.get(name);
        if (state?.status === 'ready')
          await writeState(tx, db.dialect, { ...state, status: 'stale' });
      }
    });
  }
  return ctx;
}

async function report(ctx: MirrorContext): Promise<number> {
  const { cursor, verdicts } = await verifyMirror(ctx);
  for (const verdict of verdicts) {
    ctx.log.info(
      verdict.matches
        ? `verify: ${verdict.collection} matches (${verdict.mirror.count} rows) at cursor ${cursor}`
        : `verify: ${verdict.collection} DIFFERS at cursor ${cursor}: the API has ${verdict.server.count} rows (checksum ${verdict.server.checksum}), the mirror ${verdict.mirror.count} (checksum ${verdict.mirror.checksum})`,
    );
  }
  const differing = verdicts.filter((verdict) => !verdict.matches).map((v) => v.collection);
  if (differing.length === 0) return EXIT.ok;
  ctx.log.error(`verify: ${differing.join(', ')} differ${differing.length === 1 ? 's' : ''}`);
  return EXIT.mismatch;
}

async function runSteps(ctx: MirrorContext, options: MirrorOptions): Promise<number> {
  for (;;) {
    try {
      if (!(await loadSnapshots(ctx))) return EXIT.ok;
      if (options.verify) return await report(ctx);
      const cursor = await followFeed(ctx, { untilCaughtUp: options.once ?? false });
      ctx.log.info(`${ctx.signal.aborted ? 'stopped' : 'caught up'} at cursor ${cursor}`);
      return EXIT.ok;
    } catch (error) {
      if (!(error instanceof PlatformCursorExpiredError)) throw error;
      if (!options.resnapshotOnExpiry) {
        ctx.log.error(EXPIRED_ADVICE);
        return EXIT.cursorExpired;
      }
      ctx.log.info(
        "the change feed expired the mirror's cursor (410 cursor_expired); loading every collection again",
      );
      await markStale(ctx);
    }
  }
}

/** Runs the mirror; answers the process's exit code. */
export async function runMirror(options: MirrorOptions): Promise<number> {
  options.log.info(
    `mirroring ${options.collections.join(', ')} from ${options.baseUrl} into ${describeDatabase(options.database)}`,
  );
  const db = await openDatabase(options.database);
  try {
    return await runSteps(await prepare(db, options), options);
  } finally {
    await db.close();
  }
}
