/**
 * An update event's `previous_attributes`: each top-level field of the resource whose value the
 * change moved, with its value `before`. Both views come from the same mapper, so a field's
 * value is compared as JSON (a nested object or array counts as changed when any part of it
 * did, and is then given whole, as Stripe does).
 */
export function changedFields(
  before: Record<string, unknown>,
  after: Record<string, unknown>,
): Record<string, unknown> {
  const changed: Record<string, unknown> = {};
  for (const [field, previous] of Object.entries(before)) {
    if (!sameValue(previous, after[field])) changed[field] = previous;
  }
  return changed;
}

function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  return JSON.stringify(a) === JSON.stringify(b);
}
