import { type DialectTypes, statementsMigration } from '../../database/migration';
import type { DialectName } from '../../database/sql';

/**
 * The token cache's invalidation (auth/token-cache.ts): `auth_version` holds one counter, and a
 * trigger on each table a token lookup reads bumps it on every write that can change the lookup's
 * answer. Triggers see every writer: this server, another instance, the CLI in its own process,
 * raw SQL. Inserts do not bump (a token that did not exist was never cached), and neither does
 * the `last_used_at` touch nor any other column the lookups do not read (`UPDATE OF` lists them).
 *
 * A column a lookup starts to read (tokens.service.ts, oauth/access-tokens.service.ts) must be
 * added here, in a new migration. TRUNCATE fires no row trigger: nothing truncates these tables
 * (an operator who does should restart the servers, or bump `auth_version` by hand).
 *
 * On PostgreSQL the triggers are deferred constraint triggers: the bump runs at COMMIT, as the
 * transaction's last write, and once per transaction (a transaction-local flag). Bumping in the
 * middle of a transaction would take the counter row's lock before the rows written after it,
 * and two transactions taking them in opposite orders (revoking a token while its member is
 * removed) would deadlock. Readers see the new version when, and only when, they see the change.
 * SQLite locks the whole database for a write, so its plain row triggers cannot deadlock.
 */
interface Watched {
  table: string;
  /** The columns a lookup reads: an UPDATE of any of them bumps. */
  columns: readonly string[];
  /** Only rows of which (OLD.…) bump; none: every row. */
  when?: string;
}

const ACCESS_TOKEN_KINDS = `OLD.kind IN ('AccessToken', 'ClientCredentials')`;

const WATCHED: readonly Watched[] = [
  {
    table: 'personal_access_tokens',
    columns: [
      'id',
      'token_hash',
      'organization_id',
      'user_id',
      'scopes',
      'expires_at',
      'revoked_at',
    ],
  },
  { table: 'organizations', columns: ['id', 'rate_limit_per_minute'] },
  { table: 'users', columns: ['id', 'organization_id', 'role'] },
  { table: 'oauth_clients', columns: ['id', 'organization_id', 'user_id', 'expires_at'] },
  {
    // Sessions, interactions, grants and codes live here too; only access tokens are looked up.
    table: 'oauth_artifacts',
    columns: ['kind', 'id_hash', 'payload', 'client_id'],
    when: ACCESS_TOKEN_KINDS,
  },
];

const BUMP = 'UPDATE auth_version SET version = version + 1';

function triggerName(table: string, event?: 'update' | 'delete'): string {
  return `auth_version_${table}${event ? `_${event}` : ''}`;
}

function statements(t: DialectTypes, dialect: DialectName): string[] {
  const table = [
    `CREATE TABLE auth_version (id integer PRIMARY KEY CHECK (id = 1), version ${t.bigint} NOT NULL)`,
    'INSERT INTO auth_version (id, version) VALUES (1, 0)',
  ];
  if (dialect === 'postgres') {
    return [
      ...table,
      `CREATE FUNCTION auth_version_bump() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF coalesce(current_setting('platform.auth_version_bumped', true), '') <> 'on' THEN
    ${BUMP};
    PERFORM set_config('platform.auth_version_bumped', 'on', true);
  END IF;
  RETURN NULL;
END $$`,
      ...WATCHED.map(
        (w) =>
          `CREATE CONSTRAINT TRIGGER ${triggerName(w.table)} ` +
          `AFTER UPDATE OF ${w.columns.join(', ')} OR DELETE ON ${w.table} ` +
          'DEFERRABLE INITIALLY DEFERRED FOR EACH ROW ' +
          `${w.when ? `WHEN (${w.when}) ` : ''}EXECUTE FUNCTION auth_version_bump()`,
      ),
    ];
  }
  return [
    ...table,
    ...WATCHED.flatMap((w) => {
      const when = w.when ? ` WHEN ${w.when}` : '';
      return [
        `CREATE TRIGGER ${triggerName(w.table, 'update')} AFTER UPDATE OF ${w.columns.join(', ')} ` +
          `ON ${w.table} FOR EACH ROW${when} BEGIN ${BUMP}; END`,
        `CREATE TRIGGER ${triggerName(w.table, 'delete')} AFTER DELETE ON ${w.table} ` +
          `FOR EACH ROW${when} BEGIN ${BUMP}; END`,
      ];
    }),
  ];
}

function down(_t: DialectTypes, dialect: DialectName): string[] {
  if (dialect === 'postgres') {
    return [
      ...WATCHED.map((w) => `DROP TRIGGER ${triggerName(w.table)} ON ${w.table}`),
      'DROP FUNCTION auth_version_bump()',
      'DROP TABLE auth_version',
    ];
  }
  return [
    ...WATCHED.flatMap((w) => [
      `DROP TRIGGER ${triggerName(w.table, 'update')}`,
      `DROP TRIGGER ${triggerName(w.table, 'delete')}`,
    ]),
    'DROP TABLE auth_version',
  ];
}

export const authVersionMigration = statementsMigration(
  'AuthVersion1766400000000',
  statements,
  down,
);
