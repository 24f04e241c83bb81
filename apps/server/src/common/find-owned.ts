import { EXTERNAL_ID_PREFIX } from '@platform/contract';
import type { EntityManager, EntityTarget, FindOptionsWhere, ObjectLiteral } from 'typeorm';
import type { Sql } from '../database/sql';
import { notFound } from './resource-errors';

type Owned = ObjectLiteral & { id: string; organizationId: string };

/**
 * Loads a record of the caller's organization or throws 404. Every lookup by id goes through
 * here or filters on organization_id itself: another organization's id is simply not found.
 */
export async function findOwned<T extends Owned>(
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

/**
 * Locks a row of the organization until the transaction ends (PostgreSQL `FOR UPDATE`); a row of
 * another organization is never locked, so no caller can stall or probe another's writes. On
 * SQLite the transaction queue already serialises writers, so there is nothing to run.
 */
export async function lockOwned<T extends Owned>(
  sql: Sql,
  manager: EntityManager,
  entity: EntityTarget<T>,
  organizationId: string,
  id: string,
): Promise<void> {
  if (sql.dialect !== 'postgres') return;
  await sql.query(
    manager,
    `SELECT 1 FROM ${sql.table(entity)} WHERE ${sql.column(entity, 'id')} = :id ` +
      `AND ${sql.column(entity, 'organizationId')} = :organizationId${sql.lockRows()}`,
    { id, organizationId },
  );
}

/** `findOwned` of a row locked first, for a change that reads, checks and writes it. */
export async function findOwnedForUpdate<T extends Owned>(
  sql: Sql,
  manager: EntityManager,
  entity: EntityTarget<T>,
  organizationId: string,
  id: string,
  noun: string,
): Promise<T> {
  await lockOwned(sql, manager, entity, organizationId, id);
  return findOwned(manager, entity, organizationId, id, noun);
}

/** The external id a path id names (`ext:SIS-0042` → `SIS-0042`), or undefined for a plain id. */
export function externalIdOf(id: string): string | undefined {
  return id.startsWith(EXTERNAL_ID_PREFIX) ? id.slice(EXTERNAL_ID_PREFIX.length) : undefined;
}

/**
 * `findOwned` by external id (`id` is the `ext:` form, for the 404), for a resource with an
 * `externalId` column; `forUpdate` then locks the record by its id, and a record whose external id
 * changed before the lock is not found.
 */
export async function findOwnedByExternalId<T extends Owned>(
  sql: Sql,
  manager: EntityManager,
  entity: EntityTarget<T>,
  key: { organizationId: string; externalId: string; id: string; noun: string },
  forUpdate: boolean,
): Promise<T> {
  const { organizationId, externalId, id, noun } = key;
  const where = { organizationId, externalId } as unknown as FindOptionsWhere<T>;
  const found = await manager.findOneBy(entity, where);
  if (!found) throw notFound(noun, id);
  if (!forUpdate) return found;
  const record = await findOwnedForUpdate(sql, manager, entity, organizationId, found.id, noun);
  if ((record as { externalId?: unknown }).externalId !== externalId) throw notFound(noun, id);
  return record;
}
