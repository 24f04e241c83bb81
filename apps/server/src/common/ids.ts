import { ID_PREFIXES, type IdKind } from '@platform/contract';
import { monotonicFactory } from 'ulid';

// Monotonic so ids minted in the same millisecond still sort in creation order.
const ulid = monotonicFactory();

/** A new public id; pass the record's creation time when it is not now (seeding, imports). */
export function newId(kind: IdKind, at?: number): string {
  return `${ID_PREFIXES[kind]}_${ulid(at)}`;
}
