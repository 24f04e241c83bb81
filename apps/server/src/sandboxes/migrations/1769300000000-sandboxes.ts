import { statementsMigration } from '../../database/migration';

/** Sandbox organizations: a link to the parent, and the seeded school's shape. */
export const sandboxesMigration = statementsMigration(
  'Sandboxes1769300000000',
  (t) => [
    // No foreign key: SQLite cannot drop a column that has one (the down below), and nothing
    // deletes a live organization over the API.
    `ALTER TABLE organizations ADD COLUMN parent_organization_id varchar(32)`,
    `ALTER TABLE organizations ADD COLUMN sandbox_students integer`,
    `ALTER TABLE organizations ADD COLUMN sandbox_seed integer`,
    `ALTER TABLE organizations ADD COLUMN sandbox_reset_at ${t.timestamp}`,
    `CREATE INDEX idx_organizations_parent ON organizations (parent_organization_id)`,
  ],
  () => [
    `DROP INDEX idx_organizations_parent`,
    `ALTER TABLE organizations DROP COLUMN sandbox_reset_at`,
    `ALTER TABLE organizations DROP COLUMN sandbox_seed`,
    `ALTER TABLE organizations DROP COLUMN sandbox_students`,
    `ALTER TABLE organizations DROP COLUMN parent_organization_id`,
  ],
);
