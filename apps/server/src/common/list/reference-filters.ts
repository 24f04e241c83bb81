import { EXTERNAL_ID_PREFIX, listSpecOf, RESOURCE_NAMES, RESOURCES } from '@platform/contract';
import type { EntityMetadata } from 'typeorm';
import { quoteIdentifier } from '../../database/sql';
import type { ComputedFilter } from './list-types';

/**
 * The predicates of a list's reference filters that also take `ext:<external_id>`
 * (`filter.reference` in the contract): `student_id=stu_…,ext:SIS-0042` matches the records
 * referring to either. An external id is looked up in the referenced table within the row's own
 * organization, through its `(organization_id, external_id)` unique index; one that names no
 * record matches nothing, as an unknown id does.
 */
export function referenceFilters(
  metadata: EntityMetadata,
  listQuery: object,
): Record<string, ComputedFilter> {
  const filters: Record<string, ComputedFilter> = {};
  for (const [field, spec] of Object.entries(listSpecOf(listQuery)?.filters ?? {})) {
    if (spec.kind !== 'id' || !spec.external) continue;
    const own = metadata.columns.find((c) => c.databaseName === field);
    if (!own) throw new Error(`${metadata.name} has no column for list field '${field}'`);
    filters[field] = byIdOrExternalId(own.propertyName, referencedTable(metadata, field));
  }
  return filters;
}

/** `student_id` → the students table's quoted name and columns, from the resource registry. */
function referencedTable(metadata: EntityMetadata, field: string) {
  const singular = field.replace(/_id$/, '');
  const name = RESOURCE_NAMES.find((n) => RESOURCES[n].singular === singular);
  if (!name) throw new Error(`${metadata.name}.${field}: no resource is a '${singular}'`);
  const referenced = metadata.connection.getMetadata(name);
  const column = (property: string) => {
    const found = referenced.findColumnWithPropertyName(property);
    if (!found) throw new Error(`${referenced.name} has no property '${property}'`);
    return quoteIdentifier(found.databaseName);
  };
  return {
    table: quoteIdentifier(referenced.tableName),
    id: column('id'),
    organizationId: column('organizationId'),
    externalId: column('externalId'),
  };
}

function byIdOrExternalId(
  property: string,
  ref: ReturnType<typeof referencedTable>,
): ComputedFilter {
  return (values, sql) => {
    const column = sql.column(property);
    const ids: string[] = [];
    const keys: string[] = [];
    for (const value of values.map(String)) {
      if (value.startsWith(EXTERNAL_ID_PREFIX))
        keys.push(sql.bind(property, value.slice(EXTERNAL_ID_PREFIX.length)));
      else ids.push(sql.bind(property, value));
    }
    const byId = ids.length > 0 ? [`${column} IN (${ids.join(', ')})`] : [];
    const byKey =
      keys.length > 0
        ? [
            `${column} IN (SELECT ${ref.id} FROM ${ref.table} WHERE ${ref.organizationId} = ` +
              `${sql.column('organizationId')} AND ${ref.externalId} IN (${keys.join(', ')}))`,
          ]
        : [];
    return [...byId, ...byKey].join(' OR ');
  };
}
