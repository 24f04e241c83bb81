import { type DialectTypes, statementsMigration, timestampColumns } from '../../database/migration';
import { organizationListIndexes, organizationTable } from '../../database/tenant-table';

/**
 * Members and roles: users get a `role` (existing users become `admin`, the only thing they
 * could be before roles existed) and an optional `name`. Personal access tokens get an owner
 * (`user_id`, null for tokens an operator made) whose role caps them, and so do OAuth apps (their
 * client credentials tokens). Invitations are stored
 * with the SHA-256 of their one-time token, never the token.
 */
function statements(t: DialectTypes): string[] {
  return [
    `ALTER TABLE users ADD COLUMN role varchar(16) NOT NULL DEFAULT 'admin' CHECK (role IN ('admin', 'developer', 'viewer'))`,
    `ALTER TABLE users ADD COLUMN name varchar(200)`,
    ...organizationListIndexes('users'),
    // No foreign key: removing a member revokes the tokens first, and a revoked token keeps its
    // owner for the record.
    `ALTER TABLE personal_access_tokens ADD COLUMN user_id varchar(32)`,
    `CREATE INDEX idx_pat_user ON personal_access_tokens (user_id)`,
    // An OAuth app a member registered acts with that member's authority: its client
    // credentials tokens are capped by their role, and end with their membership.
    `ALTER TABLE oauth_clients ADD COLUMN user_id varchar(32)`,
    organizationTable(t, 'invitations', [
      'email varchar(320) NOT NULL',
      "role varchar(16) NOT NULL CHECK (role IN ('admin', 'developer', 'viewer'))",
      'token_hash varchar(64) NOT NULL UNIQUE',
      'invited_by_user_id varchar(32)',
      `expires_at ${t.timestamp} NOT NULL`,
      ...timestampColumns(t, 'accepted_at', 'revoked_at'),
    ]),
    ...organizationListIndexes('invitations'),
  ];
}

const DOWN = [
  'DROP TABLE invitations',
  'ALTER TABLE oauth_clients DROP COLUMN user_id',
  'DROP INDEX idx_pat_user',
  'ALTER TABLE personal_access_tokens DROP COLUMN user_id',
  'DROP INDEX idx_users_org_updated',
  'DROP INDEX idx_users_org_created',
  'ALTER TABLE users DROP COLUMN name',
  'ALTER TABLE users DROP COLUMN role',
];

export const membersMigration = statementsMigration('Members1766200000001', statements, () => DOWN);
