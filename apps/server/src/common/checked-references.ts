import type { EntityManager } from 'typeorm';
import { foreignKeyConstraint, isForeignKeyViolation, unknownReference } from './resource-errors';

/**
 * The references a create checked (its body's `student_id`, `course_id`, …), for when its
 * insert is refused by a foreign key anyway.
 *
 * A create reads each record its body names before inserting, but on PostgreSQL nothing holds
 * that record meanwhile: a delete committed between the read and the insert leaves the insert
 * to the foreign key, which refuses it (SQLSTATE 23503). That is the same request as one that
 * named a record that was never there, and it answers the same 400 naming the field (what SQLite,
 * whose transactions run one at a time, always answers), not a 500.
 */
export interface CheckedReference {
  /** The body's field (`student_id`), also the column its foreign key constrains. */
  field: string;
  noun: string;
  id: string;
  /** Whether the record is still there, read after the create's transaction failed. */
  exists: (manager: EntityManager) => Promise<boolean>;
}

/** The references each open create has checked so far, by its transaction's manager. */
const checked = new WeakMap<EntityManager, CheckedReference[]>();

/** Starts collecting the references the create running on `manager` checks. */
export function collectReferences(manager: EntityManager): CheckedReference[] {
  const references: CheckedReference[] = [];
  checked.set(manager, references);
  return references;
}

/** Records a reference checked on `manager`, when a create running there collects them. */
export function noteReference(manager: EntityManager, reference: CheckedReference): void {
  checked.get(manager)?.push(reference);
}

/**
 * The 400 for a create into `table` whose insert a foreign key refused because a record it
 * checked has since been deleted, or undefined when `error` is anything else. PostgreSQL names
 * the constraint (`<table>_<column>_fkey`, the default name of each reference's foreign key),
 * which says which reference it was; otherwise (SQLite names none) the references are read
 * again through `manager` and the first one gone is the answer.
 */
export async function vanishedReference(
  error: unknown,
  table: string,
  references: readonly CheckedReference[],
  manager: EntityManager,
): Promise<Error | undefined> {
  if (!isForeignKeyViolation(error)) return undefined;
  const constraint = foreignKeyConstraint(error);
  let gone = references.find((r) => constraint === `${table}_${r.field}_fkey`);
  for (const reference of gone || constraint !== undefined ? [] : references) {
    if (!(await reference.exists(manager))) {
      gone = reference;
      break;
    }
  }
  return gone && unknownReference(gone.field, gone.noun, gone.id);
}
