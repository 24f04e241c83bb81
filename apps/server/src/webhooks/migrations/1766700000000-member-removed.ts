import { type Migration, runStatements } from '../../database/migration';
import { rebuildEndpointsSqlite } from './rebuild-endpoints';

/**
 * Offboarding (api.md, "Membership"): an endpoint of a member who leaves is disabled with the
 * reason `member_removed`, and removal finds a member's endpoints by `owner_user_id`.
 */
/** The disabled reasons this migration allows (a later rebuild starts from them). */
export const REASONS = `'requested', 'gone', 'failing', 'credential_revoked', 'credential_expired', 'member_removed'`;
const OLD_REASONS = `'requested', 'gone', 'failing', 'credential_revoked', 'credential_expired'`;

const INDEX = 'CREATE INDEX idx_webhook_endpoints_member ON webhook_endpoints (owner_user_id)';

function checkOf(reasons: string): string[] {
  return [
    'ALTER TABLE webhook_endpoints DROP CONSTRAINT webhook_endpoints_disabled_reason_check',
    `ALTER TABLE webhook_endpoints ADD CONSTRAINT webhook_endpoints_disabled_reason_check CHECK (disabled_reason IN (${reasons}))`,
  ];
}

export const memberRemovedMigration: Migration = {
  name: 'MemberRemoved1766700000000',

  async up(db, dialect) {
    if (dialect === 'sqlite') await rebuildEndpointsSqlite(db, REASONS);
    else await runStatements(db, checkOf(REASONS));
    await runStatements(db, [INDEX]);
  },

  async down(db, dialect) {
    await runStatements(db, [
      'DROP INDEX idx_webhook_endpoints_member',
      `UPDATE webhook_endpoints SET disabled_reason = 'credential_revoked' WHERE disabled_reason = 'member_removed'`,
    ]);
    if (dialect === 'sqlite') await rebuildEndpointsSqlite(db, OLD_REASONS);
    else await runStatements(db, checkOf(OLD_REASONS));
  },
};
