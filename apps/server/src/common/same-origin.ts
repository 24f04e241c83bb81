import type { Request } from 'express';

/**
 * Whether a browser's form POST came from a page of `origin` (our own), read from what the
 * browser itself says: `Origin`, or `Sec-Fetch-Site` where `Origin` is `null` (Chromium under
 * the site-wide `Referrer-Policy: no-referrer`). Every state-changing form of the sign-in and
 * invitation pages checks it, beside SameSite cookies, so another site cannot post them.
 */
export function isSameOriginPost(req: Request, origin: string): boolean {
  const sent = req.headers.origin;
  const site = req.headers['sec-fetch-site'];
  if (sent === 'null') return site === 'same-origin';
  if (sent !== undefined && sent !== origin) return false;
  return site === undefined || site === 'same-origin' || site === 'none';
}
