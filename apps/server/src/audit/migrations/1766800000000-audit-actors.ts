import { type Migration, rebuildTableSqlite, runStatements } from '../../database/migration';

/**
 * Two more kinds of actor in the audit log: a member at the sign-in pages (approving an app,
 * signing out) and an OAuth client calling the authorization server (revoking a token).
 */
const ACTORS = `'personal_access_token', 'oauth_access_token', 'operator', 'invitation', 'sign_in', 'oauth_client'`;
const OLD_ACTORS = `'personal_access_token', 'oauth_access_token', 'operator', 'invitation'`;

const CHECK = /actor_type varchar\(32\) NOT NULL CHECK \(actor_type IN \([^)]*\)\)/;

function actorsCheck(actors: string) {
  return async (db: Parameters<Migration['up']>[0], dialect: Parameters<Migration['up']>[1]) => {
    if (dialect === 'sqlite') {
      await rebuildTableSqlite(db, 'audit_events', (sql) => {
        if (!CHECK.test(sql))
          throw new Error('audit_events.actor_type is not as its migration made it');
        return sql.replace(
          CHECK,
          `actor_type varchar(32) NOT NULL CHECK (actor_type IN (${actors}))`,
        );
      });
      return;
    }
    await runStatements(db, [
      'ALTER TABLE audit_events DROP CONSTRAINT audit_events_actor_type_check',
      `ALTER TABLE audit_events ADD CONSTRAINT audit_events_actor_type_check CHECK (actor_type IN (${actors}))`,
    ]);
  };
}

export const auditActorsMigration: Migration = {
  name: 'AuditActors1766800000000',
  up: actorsCheck(ACTORS),
  async down(db, dialect) {
    await runStatements(db, [
      `DELETE FROM audit_events WHERE actor_type IN ('sign_in', 'oauth_client')`,
    ]);
    await actorsCheck(OLD_ACTORS)(db, dialect);
  },
};
