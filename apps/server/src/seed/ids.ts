import { randomBytes } from 'node:crypto';
import { ID_PREFIXES, type IdKind } from '@platform/contract';
import { ulid } from 'ulid';

const pool = { bytes: Buffer.alloc(0), next: 0 };

/** Crypto randomness, 4 KiB at a time: ulid's default reads one byte per character, slowly. */
function pooledRandom(): number {
  if (pool.next === pool.bytes.length) {
    pool.bytes = randomBytes(4096);
    pool.next = 0;
  }
  return pool.bytes[pool.next++]! / 256;
}

/**
 * A public id whose time part is `at`, the record's creation time, for generated data. Unlike
 * `newId` it is not monotonic, so records generated out of time order still carry their own time.
 */
export function demoId(kind: IdKind, at: number): string {
  return `${ID_PREFIXES[kind]}_${ulid(at, pooledRandom)}`;
}
