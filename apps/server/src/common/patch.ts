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
