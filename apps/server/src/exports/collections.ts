import { EXPORT_COLLECTIONS, type ExportCollection } from '@platform/contract';
import type { DataSource, EntityTarget, ObjectLiteral } from 'typeorm';
import type { z } from 'zod';
import { rowMapper } from '../common/resource-fields';
import { resourceSchemas, SERVER_RESOURCES } from '../resources';

/** What an export or a checksum reads of one collection. */
export interface CollectionSource {
  entity: EntityTarget<ObjectLiteral>;
  resource: z.AnyZodObject;
  /** The contract's list query: the filters an export accepts. */
  listQuery: z.ZodTypeAny;
}

/** Each exported collection's source, from the resource registry (`resources.ts`). */
export const COLLECTION_SOURCES = Object.fromEntries(
  EXPORT_COLLECTIONS.map((name): [ExportCollection, CollectionSource] => {
    const { resource, listQuery } = resourceSchemas(name);
    return [name, { entity: SERVER_RESOURCES[name].entity, resource, listQuery }];
  }),
) as Readonly<Record<ExportCollection, CollectionSource>>;

/** A raw row of `source`'s entity as its API resource (`rowMapper`), built once per export. */
export function exportRowMapper(
  dataSource: DataSource,
  source: CollectionSource,
): (row: Record<string, unknown>) => Record<string, unknown> {
  return rowMapper(dataSource.getMetadata(source.entity), dataSource.driver, source.resource);
}
