import type { DialectTypes } from './migration';

/**
 * The table of an organization-owned resource, as its migration writes it: the public id, the
 * tenant key every query filters on (deleting an organization deletes its rows), `columns`, then
 * when each row was made and (unless `updatable` is false) last changed; `constraints` are table
 * constraints. Platform, not the organizations module's: every tenant-owned table has this shape.
 */
export function organizationTable(
  t: DialectTypes,
  table: string,
  columns: readonly string[],
  options: { updatable?: boolean; constraints?: readonly string[] } = {},
): string {
  const lines = [
    'id varchar(32) PRIMARY KEY NOT NULL',
    'organization_id varchar(32) NOT NULL REFERENCES organizations (id) ON DELETE CASCADE',
    ...columns,
    `created_at ${t.timestamp} NOT NULL`,
    ...(options.updatable === false ? [] : [`updated_at ${t.timestamp} NOT NULL`]),
    ...(options.constraints ?? []),
  ];
  return `CREATE TABLE ${table} (\n  ${lines.join(',\n  ')}\n)`;
}

/** The indexes behind the list convention's two orders, per organization (the id breaks ties). */
export function organizationListIndexes(table: string): string[] {
  return ['created', 'updated'].map(
    (order) =>
      `CREATE INDEX idx_${table}_org_${order} ON ${table} (organization_id, ${order}_at, id)`,
  );
}
