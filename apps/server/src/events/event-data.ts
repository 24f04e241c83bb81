import { EXTERNAL_ID_KINDS } from '@platform/contract';

const HAS_EXTERNAL_ID: ReadonlySet<string> = new Set(EXTERNAL_ID_KINDS);

/**
 * An event's data as its resource is now: an event recorded before the resource had
 * `external_id` carries it as null, so every event of a type has the same fields (the events
 * list, the change feed and webhook deliveries alike).
 */
export function withExternalId<D extends object>(data: D): D {
  const object = (data as { object?: unknown }).object;
  // A deletion's tombstone (`{ id, object, deleted }`) names the record by its id alone.
  if ('external_id' in data || 'deleted' in data) return data;
  if (typeof object === 'string' && HAS_EXTERNAL_ID.has(object))
    return { ...data, external_id: null };
  return data;
}
