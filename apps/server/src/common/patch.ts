/**
 * Applies the fields of a partial update that differ from the entity's current values and
 * returns whether anything changed, so an update that changes nothing writes nothing and sends
 * no event.
 */
export function applyPatch<T extends object>(entity: T, changes: Partial<T>): boolean {
  let changed = false;
  for (const [key, value] of Object.entries(changes) as [keyof T, T[keyof T]][]) {
    if (value === undefined) continue;
    const current = entity[key];
    const same =
      current instanceof Date && value instanceof Date
        ? current.getTime() === value.getTime()
        : current === value;
    if (!same) {
      entity[key] = value;
      changed = true;
    }
  }
  return changed;
}

/** Copies only the keys present in `source` (an API patch body) under their entity names. */
export function pick<S extends object, T>(
  source: S,
  mapping: { [K in keyof S]?: keyof T },
): Partial<T> {
  const out: Partial<T> = {};
  for (const [key, value] of Object.entries(source) as [keyof S, unknown][]) {
    const target = mapping[key];
    if (target !== undefined && value !== undefined) out[target] = value as T[keyof T];
  }
  return out;
}

/**
 * API field → entity property for every field of an update body, checked with `satisfies`: a
 * field the contract adds to the body and the map misses (or one it does not have) is a compile
 * error, and the contract-fields spec checks the same at run time.
 */
export type UpdatableFields<Body extends object, Entity> = {
  readonly [K in keyof Required<Body>]-?: keyof Entity;
};

/**
 * A create body's fields under their entity names, an absent optional one as null: for the
 * resources whose create body is their update body made complete (students, courses), so each
 * field is mapped once, in the updatable map.
 */
export function fromBody<
  S extends object,
  T,
  M extends { readonly [K in keyof Required<S>]-?: keyof T },
>(body: S, mapping: M): Pick<T, M[keyof M]> {
  const out: Record<string, unknown> = {};
  for (const [field, property] of Object.entries(mapping) as [keyof S, string][]) {
    out[property] = body[field] ?? null;
  }
  return out as Pick<T, M[keyof M]>;
}
