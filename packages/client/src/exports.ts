/**
 * Hand-written helpers next to the generated `client.exports`: wait for an export to finish, and
 * stream its file without holding it in memory.
 */
import { API_VERSION } from './generated/routes';
import type { Export } from './generated/types';
import { PlatformError } from './errors';
import type { HttpClient } from './http-client';
import { webCrypto } from './web-crypto';

export interface WaitOptions {
  /** Between polls. Default 1000. */
  intervalMs?: number;
  /** Give up (throw) after this long. Default: wait as long as it takes. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

export interface ExportHelpers {
  /**
   * Polls `GET /v1/exports/{id}` until the export has succeeded and answers it; throws a
   * `PlatformError` when it failed or expired (or `timeoutMs` passed).
   */
  wait(id: string, options?: WaitOptions): Promise<Export>;
  /** The file of a succeeded export, streamed: NDJSON or CSV bytes as they arrive. */
  stream(id: string, options?: { signal?: AbortSignal }): Promise<ReadableStream<Uint8Array>>;
}

export function exportHelpers(
  http: HttpClient,
  base: string,
  retrieve: (id: string) => Promise<Export>,
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>,
): ExportHelpers {
  return {
    async wait(id, options = {}) {
      const started = Date.now();
      for (;;) {
        const exp = await retrieve(id);
        if (exp.status === 'succeeded') return exp;
        if (exp.status === 'failed' || exp.status === 'expired') {
          throw new PlatformError(
            `Export ${id} ${exp.status}${exp.error ? `: ${exp.error}` : ''}; start a new one`,
          );
        }
        if (options.timeoutMs !== undefined && Date.now() - started > options.timeoutMs) {
          throw new PlatformError(`Export ${id} did not finish within ${options.timeoutMs} ms`);
        }
        await sleep(options.intervalMs ?? 1000, options.signal);
      }
    },
    async stream(id, options = {}) {
      const response = await http.request({
        method: 'GET',
        url: `${base}/${API_VERSION}/exports/${encodeURIComponent(id)}/file`,
        stream: true,
        signal: options.signal ?? null,
      });
      return response.body as ReadableStream<Uint8Array>;
    },
  };
}

/**
 * The checksum `GET /v1/collections/checksums` answers, over your own copy of a collection:
 * lowercase hex SHA-256 of `<id>\t<updated_at>\n` per record, sorted by id (byte order), with
 * `updated_at` exactly as the API writes it. Equal to the server's: your copy matches.
 */
export async function collectionChecksum(
  records: Iterable<{ id: string; updated_at: string }>,
): Promise<string> {
  const crypto = await webCrypto();
  if (!crypto) throw new PlatformError('collectionChecksum needs Web Crypto (SHA-256)');
  const sorted = [...records].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const text = sorted.map((r) => `${r.id}\t${r.updated_at}\n`).join('');
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('');
}
