/**
 * Hand-written helpers next to the generated `client.imports`: wait for an import to finish.
 */
import type { Import } from './generated/types';
import { PlatformError } from './errors';
import type { WaitOptions } from './exports';

export interface ImportHelpers {
  /**
   * Polls `GET /v1/imports/{id}` until the import has finished and answers it, succeeded or
   * failed (a failed import says why in `error`: a threshold passed, unreadable rows); throws a
   * `PlatformError` once `timeoutMs` has passed. Refused rows are in `imports.errors(id)`.
   */
  wait(id: string, options?: WaitOptions): Promise<Import>;
}

export function importHelpers(
  retrieve: (id: string) => Promise<Import>,
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>,
): ImportHelpers {
  return {
    async wait(id, options = {}) {
      const started = Date.now();
      for (;;) {
        const found = await retrieve(id);
        if (found.status === 'succeeded' || found.status === 'failed') return found;
        if (options.timeoutMs !== undefined && Date.now() - started > options.timeoutMs) {
          throw new PlatformError(
            `Import ${id} did not finish within ${options.timeoutMs} ms (${found.rows_processed} of ${found.rows} rows)`,
          );
        }
        await sleep(options.intervalMs ?? 1000, options.signal);
      }
    },
  };
}
