/**
 * @platform/sync: the `platform-sync` command, and its pieces for programs that embed the mirror
 * (or measure its loader: bench/sync-mirror.bench.js).
 */
export { main, parseCommandLine, USAGE } from './cli';
export { EXIT, EXPIRED_ADVICE, runMirror, type MirrorOptions } from './mirror';
export { openDatabase, type MirrorDatabase, type Dialect } from './database';
export { loadNdjson, ndjsonRecords, type LoadOptions, type LoadResult } from './loader';
export {
  collectionTable,
  columnKind,
  deriveTable,
  MIRRORED_COLLECTIONS,
  type ColumnKind,
  type ColumnSpec,
  type TableSpec,
} from './schema';
export { createTableSql, ensureTables, readStates, upsertSql, STATE_TABLE } from './tables';
export { tableChecksum } from './verify';
