import { dialectTypes, type Migration, runStatements } from '../../database/migration';
import { rebuildEndpointsSqlite } from './rebuild-endpoints';

/**
 * Delegation (api.md): nothing made over the API outlives the credential that made it.
 * OAuth clients get `expires_at` (a client registered by an expiring token expires with it).
 * Webhook endpoints record the credential they are bound to (`owner_*`), and two more disabled
 * reasons say when that credential ended; `disabled_reason` widens to hold them.
 */
const REASONS = `'requested', 'gone', 'failing', 'credential_revoked', 'credential_expired'`;
const OLD_REASONS = `'requested', 'gone', 'failing'`;

function ownerColumns(ts: string): string[] {
  return [
    `ALTER TABLE oauth_clients ADD COLUMN expires_at ${ts}`,
    `ALTER TABLE webhook_endpoints ADD COLUMN owner_type varchar(32) CHECK (owner_type IN ('personal_access_token', 'oauth_client'))`,
    // The personal access token or OAuth client id; for a user's grant, the user and the grant
    // id (as oauth_artifacts.grant_id holds it).
    `ALTER TABLE webhook_endpoints ADD COLUMN owner_id varchar(32)`,
    `ALTER TABLE webhook_endpoints ADD COLUMN owner_user_id varchar(32)`,
    `ALTER TABLE webhook_endpoints ADD COLUMN owner_grant_id varchar(64)`,
    `CREATE INDEX idx_webhook_endpoints_owner ON webhook_endpoints (owner_type, owner_id)`,
  ];
}

/** What `down` undoes on both databases before the reasons' CHECK goes back to the old list. */
const UNDO_OWNER_COLUMNS = [
  'DROP INDEX idx_webhook_endpoints_owner',
  'ALTER TABLE webhook_endpoints DROP COLUMN owner_grant_id',
  'ALTER TABLE webhook_endpoints DROP COLUMN owner_user_id',
  'ALTER TABLE webhook_endpoints DROP COLUMN owner_id',
  'ALTER TABLE webhook_endpoints DROP COLUMN owner_type',
  'ALTER TABLE oauth_clients DROP COLUMN expires_at',
  `UPDATE webhook_endpoints SET disabled_reason = 'requested' WHERE disabled_reason LIKE 'credential_%'`,
];

export const delegationMigration: Migration = {
  name: 'Delegation1766100000000',

  async up(db, dialect) {
    const ts = dialectTypes(dialect).timestamp;
    if (dialect === 'sqlite') {
      await rebuildEndpointsSqlite(db, REASONS);
      await runStatements(db, ownerColumns(ts));
      return;
    }
    await runStatements(db, [
      'ALTER TABLE webhook_endpoints DROP CONSTRAINT webhook_endpoints_disabled_reason_check',
      'ALTER TABLE webhook_endpoints ALTER COLUMN disabled_reason TYPE varchar(32)',
      `ALTER TABLE webhook_endpoints ADD CONSTRAINT webhook_endpoints_disabled_reason_check CHECK (disabled_reason IN (${REASONS}))`,
      ...ownerColumns(ts),
    ]);
  },

  async down(db, dialect) {
    await runStatements(db, UNDO_OWNER_COLUMNS);
    if (dialect === 'sqlite') {
      await rebuildEndpointsSqlite(db, OLD_REASONS);
      return;
    }
    await runStatements(db, [
      'ALTER TABLE webhook_endpoints DROP CONSTRAINT webhook_endpoints_disabled_reason_check',
      `ALTER TABLE webhook_endpoints ADD CONSTRAINT webhook_endpoints_disabled_reason_check CHECK (disabled_reason IN (${OLD_REASONS}))`,
      'ALTER TABLE webhook_endpoints ALTER COLUMN disabled_reason TYPE varchar(16)',
    ]);
  },
};
