import { EXPORT_COLLECTIONS, type ExportCollection } from '@platform/contract';
import type { DataSource, EntityTarget, ObjectLiteral } from 'typeorm';
import type { z } from 'zod';
import { fieldProperties } from '../common/resource-fields';
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

/** TypeORM's SQLite text form of a timestamp (UTC, milliseconds). */
const SQLITE_TIMESTAMP = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}$/;

/**
 * A raw row of `entity` as its API resource, the same as `resourceMapper` over the hydrated
 * entity gives: text and integer columns as they are, timestamps as RFC 3339 with milliseconds,
 * anything else through the driver's own conversion. Built once per export; per row it only reads
 * and converts, as an export of a million rows needs.
 */
export function rowMapper(
  dataSource: DataSource,
  source: CollectionSource,
): (row: Record<string, unknown>) => Record<string, unknown> {
  const metadata = dataSource.getMetadata(source.entity);
  const driver = dataSource.driver;
  const object = (source.resource.shape as { object: z.ZodLiteral<string> }).object.value;
  const plain = new Set<unknown>(['varchar', 'text', 'integer', String]);
  const fields = fieldProperties(metadata, source.resource).map(([field, property]) => {
    const column = metadata.findColumnWithPropertyName(property);
    if (!column) throw new Error(`${metadata.name} has no column ${property}`);
    let convert: (raw: unknown) => unknown;
    if (column.type === Date) {
      convert = (raw) => {
        if (raw === null || raw === undefined) return null;
        if (raw instanceof Date) return raw.toISOString();
        if (typeof raw === 'string' && SQLITE_TIMESTAMP.test(raw))
          return `${raw.slice(0, 10)}T${raw.slice(11)}Z`;
        return (driver.prepareHydratedValue(raw, column) as Date).toISOString();
      };
    } else if (plain.has(column.type) && !column.transformer) {
      convert = (raw) => raw ?? null;
    } else {
      convert = (raw) => {
        const value: unknown = driver.prepareHydratedValue(raw, column);
        return value instanceof Date ? value.toISOString() : (value ?? null);
      };
    }
    return { field, column: column.databaseName, convert };
  });
  return (row) => {
    const resource: Record<string, unknown> = { id: undefined, object };
    for (const { field, column, convert } of fields) resource[field] = convert(row[column]);
    return resource;
  };
}
