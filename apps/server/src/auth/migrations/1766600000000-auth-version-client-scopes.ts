import { type DialectTypes, statementsMigration } from '../../database/migration';
import type { DialectName } from '../../database/sql';

/**
 * An OAuth access token's scopes are now cut to its client's (a member's demotion narrows the
 * apps they registered), so the token lookup reads `oauth_clients.scopes`: a change to it must
 * invalidate the token cache too (see 1766400000000-auth-version.ts).
 */
const BEFORE = ['id', 'organization_id', 'user_id', 'expires_at'];
const AFTER = [...BEFORE, 'scopes'];

function triggers(columns: readonly string[]) {
  return (_t: DialectTypes, dialect: DialectName): string[] => {
    if (dialect === 'postgres') {
      return [
        'DROP TRIGGER auth_version_oauth_clients ON oauth_clients',
        'CREATE CONSTRAINT TRIGGER auth_version_oauth_clients ' +
          `AFTER UPDATE OF ${columns.join(', ')} OR DELETE ON oauth_clients ` +
          'DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION auth_version_bump()',
      ];
    }
    return [
      'DROP TRIGGER auth_version_oauth_clients_update',
      `CREATE TRIGGER auth_version_oauth_clients_update AFTER UPDATE OF ${columns.join(', ')} ` +
        'ON oauth_clients FOR EACH ROW BEGIN UPDATE auth_version SET version = version + 1; END',
    ];
  };
}

export const authVersionClientScopesMigration = statementsMigration(
  'AuthVersionClientScopes1766600000000',
  triggers(AFTER),
  triggers(BEFORE),
);
