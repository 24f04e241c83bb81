import { statementsMigration } from '../../database/migration';

/** Short-lived download links of export files: the token's hash, and who made the link. */
export const exportDownloadLinksMigration = statementsMigration(
  'ExportDownloadLinks1767100000000',
  (t) => [
    `CREATE TABLE export_download_links (
      token_hash varchar(64) PRIMARY KEY,
      export_id varchar(32) NOT NULL REFERENCES exports (id) ON DELETE CASCADE,
      organization_id varchar(32) NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
      owner_type varchar(32) CHECK (owner_type IN ('personal_access_token', 'oauth_client')),
      owner_id varchar(32),
      owner_user_id varchar(32),
      owner_grant_id varchar(64),
      created_at ${t.timestamp} NOT NULL,
      expires_at ${t.timestamp} NOT NULL
    )`,
    // The sweep of expired links, and the cascade when an export goes.
    `CREATE INDEX idx_export_download_links_expires ON export_download_links (expires_at)`,
    `CREATE INDEX idx_export_download_links_export ON export_download_links (export_id)`,
  ],
  () => [`DROP TABLE export_download_links`],
);
