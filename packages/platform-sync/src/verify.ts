/**
 * `--verify`: the mirror against `GET /v1/collections/checksums`. The checksums are read at the
 * server's cursor, which is never behind the mirror's; the mirror first applies the feed up to
 * exactly that cursor (`until=`), then computes the same checksum over its tables: SHA-256 of
 * `<id>\t<updated_at>\n` per row, in id byte order.
 */
import { createHash } from 'node:crypto';
import type { MirrorContext } from './context';
import { quote, type SqlExecutor, type Dialect } from './database';
import { followFeed } from './follow';

export interface CollectionVerdict {
  collection: string;
  matches: boolean;
  server: { count: number; checksum: string };
  mirror: { count: number; checksum: string };
}

/** Rows read per query while hashing. */
const HASH_PAGE = 10_000;

/** The count and checksum of a mirrored table, as the API computes them. */
export async function tableChecksum(
  db: SqlExecutor,
  dialect: Dialect,
  table: string,
): Promise<{ count: number; checksum: string }> {
  const hash = createHash('sha256');
  let count = 0;
  let after: string | null = null;
  for (;;) {
    const where = after === null ? '' : `WHERE ${quote('id')} > ${dialect.placeholder(0)} `;
    const rows: { id: string; updated_at: string | null }[] = await db.all(
      `SELECT ${quote('id')}, ${quote('updated_at')} FROM ${quote(table)} ${where}ORDER BY ${quote('id')} LIMIT ${HASH_PAGE}`,
      after === null ? [] : [after],
    );
    for (const row of rows) hash.update(`${row.id}\t${row.updated_at ?? ''}\n`);
    count += rows.length;
    if (rows.length < HASH_PAGE) break;
    after = rows[rows.length - 1]!.id;
  }
  return { count, checksum: hash.digest('hex') };
}

/** Brings the mirror to the checksums' cursor and compares every collection. */
export async function verifyMirror(
  ctx: MirrorContext,
): Promise<{ cursor: string; verdicts: CollectionVerdict[] }> {
  const collections = [...ctx.tables.keys()];
  const sums = await ctx.client.checksums.retrieve({ collections: collections.join(',') });
  ctx.log.info(`checksums read at cursor ${sums.cursor}; bringing the mirror there`);
  const at = await followFeed(ctx, { until: sums.cursor });
  if (at !== sums.cursor)
    throw new Error(
      ctx.signal.aborted
        ? 'stopped before the mirror reached the checksums cursor'
        : `the mirror is at cursor ${at}, past the checksums cursor ${sums.cursor}`,
    );
  const verdicts: CollectionVerdict[] = [];
  for (const server of sums.data) {
    const mirror = await tableChecksum(ctx.db, ctx.db.dialect, server.collection);
    verdicts.push({
      collection: server.collection,
      matches: mirror.count === server.count && mirror.checksum === server.checksum,
      server: { count: server.count, checksum: server.checksum },
      mirror,
    });
  }
  return { cursor: sums.cursor, verdicts };
}
