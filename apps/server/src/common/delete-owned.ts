import type { EventData } from '@platform/contract';
import type { EntityTarget, ObjectLiteral } from 'typeorm';
import type { EventsService } from '../events/events.service';
import { findOwned } from './find-owned';
import { isForeignKeyViolation, stillReferenced } from './resource-errors';
import type { TransactionRunner } from './transactions';

export interface DeleteSpec<T, O extends 'student' | 'course' | 'exam'> {
  entity: EntityTarget<T>;
  object: O;
  organizationId: string;
  id: string;
  /** Who may still refer to the record, and what to do instead, for the 409. */
  referencedBy: string;
  instead: string;
}

/**
 * Deletes a record of the organization with its `<object>.deleted` event in one transaction.
 * The database's foreign keys decide whether others still refer to it, so there is no
 * check-then-delete race; a violation becomes a 409 that says what to do instead.
 */
export async function deleteOwned<
  T extends ObjectLiteral & { id: string; organizationId: string },
  O extends 'student' | 'course' | 'exam',
>(
  transactions: TransactionRunner,
  events: EventsService,
  spec: DeleteSpec<T, O>,
): Promise<{ id: string; object: O; deleted: true }> {
  const { entity, object, organizationId, id } = spec;
  try {
    return await transactions.run(async (manager) => {
      await findOwned(manager, entity, organizationId, id, object);
      await manager.delete(entity, { id, organizationId });
      const deleted = { id, object, deleted: true as const };
      // TypeScript cannot pair the generic `object` with its event type; the catalogue has all three.
      await events.record(
        manager,
        organizationId,
        `${object}.deleted` as 'student.deleted',
        deleted as EventData<'student.deleted'>,
      );
      return deleted;
    });
  } catch (error) {
    if (isForeignKeyViolation(error)) {
      const noun = object.charAt(0).toUpperCase() + object.slice(1);
      throw stillReferenced(noun, id, spec.referencedBy, spec.instead);
    }
    throw error;
  }
}
