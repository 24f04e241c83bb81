import type { EntityManager, EntityTarget, FindOptionsWhere, ObjectLiteral } from 'typeorm';
import { notFound } from './resource-errors';

/**
 * Loads a record of the caller's organization or throws 404. Every lookup by id goes through
 * here or filters on organization_id itself: another organization's id is simply not found.
 */
export async function findOwned<T extends ObjectLiteral & { id: string; organizationId: string }>(
  manager: EntityManager,
  entity: EntityTarget<T>,
  organizationId: string,
  id: string,
  noun: string,
): Promise<T> {
  const record = await manager.findOneBy(entity, { id, organizationId } as FindOptionsWhere<T>);
  if (!record) throw notFound(noun, id);
  return record;
}
