import { listSpecOf } from '@platform/contract';
import type { EntityMetadata } from 'typeorm';
import type { ListFields } from './list-types';

/**
 * A collection's list columns, derived rather than restated: every field the contract's list
 * query filters, ranges over, sorts or searches is the entity column of the same name (API
 * fields are the database's snake_case names). A field the contract declares without such a
 * column throws when the service is built, so a contract change cannot silently miss the SQL.
 */
export function listFieldsFor(
  metadata: EntityMetadata,
  listQuerySchema: object,
  /**
   * Fields whose column has another name (`updated_at` of a record that never changes is its
   * `created_at`), and fields the service filters on itself (the path's endpoint id): API field →
   * column name. Each is also a list field.
   */
  columnOf: Readonly<Record<string, string>> = {},
  /** Filters with no column, which the service turns into SQL itself (ComputedFilter). */
  computed: readonly string[] = [],
): ListFields {
  const spec = listSpecOf(listQuerySchema);
  if (!spec) throw new Error(`${metadata.name}: the schema is not a list query of the contract`);
  const property = (field: string): string => {
    const name = columnOf[field] ?? field;
    const column = metadata.columns.find((c) => c.databaseName === name);
    if (!column) throw new Error(`${metadata.name} has no column for list field '${field}'`);
    return column.propertyName;
  };
  for (const field of computed) {
    if (!(field in spec.filters))
      throw new Error(`${metadata.name}: computed filter '${field}' is not a filter of the list`);
  }
  const fields = new Set([
    ...Object.keys(spec.filters).filter((field) => !computed.includes(field)),
    ...Object.keys(spec.ranges),
    ...spec.sort,
    ...Object.keys(columnOf),
  ]);
  return {
    columns: Object.fromEntries([...fields].map((field) => [field, property(field)])),
    ...(spec.search?.length && { search: spec.search.map(property) }),
    ...(spec.tally && { tally: spec.tally.map((field) => columnOf[field] ?? field) }),
  };
}
