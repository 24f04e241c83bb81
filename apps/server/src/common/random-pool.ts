import { randomFillSync } from 'node:crypto';

/**
 * Cryptographically random bytes, drawn from a buffer filled a few KiB at a time: the same
 * source as `randomBytes`, without a system call for each id. Minting a ULID asked the kernel
 * for one byte sixteen times (ulid's default PRNG), a measurable share of every request.
 */
const POOL_SIZE = 4096;
const pool = Buffer.alloc(POOL_SIZE);
let offset = POOL_SIZE;

/** `n` (≤ POOL_SIZE) random bytes, as a view that is only valid until the next call. */
function take(n: number): Buffer {
  if (offset + n > POOL_SIZE) {
    randomFillSync(pool);
    offset = 0;
  }
  const bytes = pool.subarray(offset, offset + n);
  offset += n;
  return bytes;
}

/** A PRNG for ulid's factories: a random byte / 256, as its default one, from the pool. */
export function pooledPrng(): number {
  return take(1)[0]! / 256;
}

/** `n` random bytes as hex (request ids). */
export function randomHex(n: number): string {
  return take(n).toString('hex');
}
