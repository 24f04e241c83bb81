import { ID_PREFIXES, type IdKind, type PrefixedId } from '@platform/contract';
import { monotonicFactory } from 'ulid';
import { pooledPrng } from './random-pool';

// Monotonic so ids minted in the same millisecond still sort in creation order.
const ulid = monotonicFactory(pooledPrng);

/** A new public id; pass the record's creation time when it is not now (seeding, imports). */
export function newId(kind: IdKind, at?: number): string {
  return `${ID_PREFIXES[kind]}_${ulid(at)}`;
}

/** An id for a row no API response names (`mail_…`): the same ulid, any short prefix. */
export function newInternalId(prefix: string, at?: number): string {
  return `${prefix}_${ulid(at)}`;
}

/**
 * A stored id typed with its prefix, for a response (the contract types ids as `stu_…` etc.).
 * Only a type: id columns hold nothing but ids `newId` made for that kind.
 */
export function publicId<K extends IdKind>(kind: K, id: string): PrefixedId<K>;
export function publicId<K extends IdKind>(kind: K, id: string | null): PrefixedId<K> | null;
export function publicId(_kind: IdKind, id: string | null): string | null {
  return id;
}
