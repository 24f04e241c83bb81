import { createHash } from 'node:crypto';

/**
 * The path a request names, the same whichever alias the caller used: `/api/v1/x` is `/v1/x`
 * (same handlers) and a trailing slash is ignored (Express routes `/v1/x/` to `/v1/x`).
 * The query string is not part of it: no POST route of the contract takes a query.
 */
export function normalisedPath(originalUrl: string): string {
  let path = originalUrl.split('?')[0] ?? '/';
  if (path === '/api/v1' || path.startsWith('/api/v1/')) path = path.slice('/api'.length);
  return path.length > 1 ? path.replace(/\/+$/, '') || '/' : path;
}

/**
 * JSON with object keys sorted at every level, so two bodies that differ only in key order or
 * whitespace (which JSON says are the same document) get the same fingerprint. Array order is
 * kept: it is meaningful.
 */
export function canonicalJson(value: unknown): string {
  if (value === undefined) return '';
  return JSON.stringify(value, (_key, item: unknown) => {
    if (item === null || typeof item !== 'object' || Array.isArray(item)) return item;
    // fromEntries defines own properties, so a "__proto__" key in the body stays a key.
    return Object.fromEntries(
      Object.entries(item as Record<string, unknown>).sort(([a], [b]) =>
        a < b ? -1 : a > b ? 1 : 0,
      ),
    );
  });
}

/** SHA-256 (hex) of what makes two requests "the same request" for an idempotency key. */
export function requestFingerprint(method: string, originalUrl: string, body: unknown): string {
  return createHash('sha256')
    .update(`${method.toUpperCase()}\n${normalisedPath(originalUrl)}\n${canonicalJson(body)}`)
    .digest('hex');
}
