import { listSpecOf } from '@platform/contract';
import type { EntityMetadata } from 'typeorm';
import type { ListFields } from './find-page';

/**
 * A collection's list columns, derived rather than restated: every field the contract's list
 * query filters, ranges over, sorts or searches is the entity column of the same name (API
 * fields are the database's snake_case names). A field the contract declares without such a
 * column throws when the service is built, so a contract change cannot silently miss the SQL.
 */
export function listFieldsFor(metadata: EntityMetadata, listQuerySchema: object): ListFields {
  const spec = listSpecOf(listQuerySchema);
  if (!spec) throw new Error(`${metadata.name}: the schema is not a list query of the contract`);
  const property = (field: string): string => {
    const column = metadata.columns.find((c) => c.databaseName === field);
    if (!column) throw new Error(`${metadata.name} has no column for list field '${field}'`);
    return column.propertyName;
  };
  const fields = new Set([...Object.keys(spec.filters), ...Object.keys(spec.ranges), ...spec.sort]);
  return {
    columns: Object.fromEntries([...fields].map((field) => [field, property(field)])),
    ...(spec.search?.length && { search: spec.search.map(property) }),
  };
}
