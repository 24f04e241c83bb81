import { statementsMigration } from '../../database/migration';
import { organizationListIndexes, organizationTable } from '../../database/tenant-table';

/**
 * The OAuth 2.0 authorization server: organization members (users), registered clients, and
 * oidc-provider's artifacts (codes, tokens, grants, sessions, interactions) keyed by the SHA-256
 * of their id, so the table never holds a usable token. Personal access tokens gain
 * `updated_at`, which the list convention sorts and filters on (`updated_since`).
 */
export const oauthMigration = statementsMigration(
  'OAuth1765000000000',
  (t) => [
    organizationTable(t, 'users', [
      'email varchar(320) NOT NULL',
      'password_hash varchar(200) NOT NULL',
    ]),
    // Emails are stored lower-cased; one account per address across the platform, so the login
    // page needs no organization picker.
    `CREATE UNIQUE INDEX idx_users_email ON users (email)`,
    `CREATE INDEX idx_users_org ON users (organization_id)`,
    organizationTable(t, 'oauth_clients', [
      'name varchar(100) NOT NULL',
      "type varchar(16) NOT NULL CHECK (type IN ('confidential', 'public'))",
      'secret_hash varchar(64)',
      'redirect_uris text NOT NULL',
      'scopes varchar(1000) NOT NULL',
      'grant_types varchar(200) NOT NULL',
    ]),
    ...organizationListIndexes('oauth_clients'),
    `CREATE TABLE oauth_artifacts (
      kind varchar(32) NOT NULL,
      id_hash varchar(64) NOT NULL,
      payload text NOT NULL,
      grant_id varchar(64),
      uid varchar(64),
      client_id varchar(64),
      expires_at ${t.timestamp},
      consumed_at ${t.timestamp},
      PRIMARY KEY (kind, id_hash)
    )`,
    `CREATE INDEX idx_oauth_artifacts_grant ON oauth_artifacts (grant_id)`,
    `CREATE INDEX idx_oauth_artifacts_uid ON oauth_artifacts (uid)`,
    `CREATE INDEX idx_oauth_artifacts_client ON oauth_artifacts (client_id)`,
    `CREATE INDEX idx_oauth_artifacts_expires ON oauth_artifacts (expires_at)`,
    `ALTER TABLE personal_access_tokens ADD COLUMN updated_at ${t.timestamp}`,
    `UPDATE personal_access_tokens SET updated_at = COALESCE(revoked_at, created_at)`,
    `CREATE INDEX idx_pat_org_updated ON personal_access_tokens (organization_id, updated_at, id)`,
  ],
  () => [
    'DROP INDEX idx_pat_org_updated',
    'ALTER TABLE personal_access_tokens DROP COLUMN updated_at',
    'DROP TABLE oauth_artifacts',
    'DROP TABLE oauth_clients',
    'DROP TABLE users',
  ],
);
