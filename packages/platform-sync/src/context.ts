import type { Client } from '@platform/client';
import type { MirrorDatabase } from './database';
import type { Logger } from './log';
import type { TableSpec } from './schema';

/** What every step of a mirror run works with. */
export interface MirrorContext {
  readonly db: MirrorDatabase;
  readonly client: Client;
  /** The mirrored collections' tables, by collection. */
  readonly tables: ReadonlyMap<string, TableSpec>;
  readonly log: Logger;
  /** Aborted by SIGINT/SIGTERM: finish the transaction under way, then stop. */
  readonly signal: AbortSignal;
  /** Export records per transaction. */
  readonly batchRows: number;
  /** Between polls of a running export, in ms. */
  readonly pollMs: number;
}
