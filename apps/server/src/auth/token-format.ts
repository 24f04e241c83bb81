import { randomBytes, timingSafeEqual } from 'node:crypto';
import { crc32 } from 'node:zlib';

export { hashToken } from '../security/crypto';

/**
 * Personal access token format: `pat_` + 30 random base62 characters (≈178 bits) + a 6-character
 * base62 CRC32 of the random part. The checksum lets secret scanners recognise a real token and
 * lets us refuse a mistyped one without a database lookup. Only the SHA-256 hash is stored.
 */
export const PAT_PREFIX = 'pat_';
/** A sandbox organization's tokens: scanners and logs tell them from live ones at a glance. */
export const SANDBOX_PAT_PREFIX = 'pat_test_';
const RANDOM_LENGTH = 30;
const CHECKSUM_LENGTH = 6;
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const PAT_PATTERN = new RegExp(
  `^${PAT_PREFIX}(?:test_)?[0-9A-Za-z]{${RANDOM_LENGTH + CHECKSUM_LENGTH}}$`,
);

function base62Random(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      // 248 = 4 * 62: rejecting larger bytes keeps every character equally likely.
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return out;
}

function base62Fixed(value: number, length: number): string {
  let out = '';
  let n = value;
  for (let i = 0; i < length; i++) {
    out = BASE62[n % 62] + out;
    n = Math.floor(n / 62);
  }
  return out;
}

function checksum(body: string): string {
  return base62Fixed(crc32(body), CHECKSUM_LENGTH);
}

/** A new token; `sandbox` for one of a sandbox organization (`pat_test_…`). */
export function generatePersonalAccessToken(sandbox = false): string {
  const body = base62Random(RANDOM_LENGTH);
  return `${sandbox ? SANDBOX_PAT_PREFIX : PAT_PREFIX}${body}${checksum(body)}`;
}

function prefixOf(token: string): string {
  return token.startsWith(SANDBOX_PAT_PREFIX) ? SANDBOX_PAT_PREFIX : PAT_PREFIX;
}

/** Shape and checksum only; says nothing about whether the token exists. */
export function isWellFormedPersonalAccessToken(token: string): boolean {
  if (!PAT_PATTERN.test(token)) return false;
  const start = prefixOf(token).length;
  const body = token.slice(start, start + RANDOM_LENGTH);
  const given = Buffer.from(token.slice(start + RANDOM_LENGTH));
  return timingSafeEqual(given, Buffer.from(checksum(body)));
}

/**
 * The part of a token that is safe to display: `pat_` and the first 8 random characters; a
 * sandbox's, `pat_test_` and 7 (the column holds 16).
 */
export function displayPrefix(token: string): string {
  const prefix = prefixOf(token);
  return token.slice(0, prefix === PAT_PREFIX ? prefix.length + 8 : 16);
}
