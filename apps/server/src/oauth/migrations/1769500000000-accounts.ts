import { statementsMigration } from '../../database/migration';

/**
 * A user's columns that are the person's, not the membership's: they move to `accounts`. The
 * password hash moves too but a copy stays on `users`, written with the account's: both
 * databases add a column only at the end, so a down that re-added it could not give back the
 * released table (it is the fourth column), while these five are its last.
 */
const LINK_COLUMNS = [
  'password_reset_hash',
  'password_reset_expires_at',
  'pending_email',
  'email_change_hash',
  'email_change_expires_at',
] as const;

/**
 * One person, several organizations (decision 34): the person moves out of `users` into
 * `accounts` (email, unique platform-wide; password; pending reset and email change), and a
 * `users` row stays one membership of an account: organization, role, and a copy of the email,
 * unique per organization. Every existing user gets an account with the same ULID (`acc_…` for
 * `usr_…`), so the migration needs no lookup and its down restores exactly what was there.
 */
export const accountsMigration = statementsMigration(
  'Accounts1769500000000',
  (t, dialect) => [
    `CREATE TABLE accounts (
      id varchar(32) PRIMARY KEY NOT NULL,
      email varchar(320) NOT NULL,
      password_hash varchar(200) NOT NULL,
      password_reset_hash varchar(64),
      password_reset_expires_at ${t.timestamp},
      pending_email varchar(320),
      email_change_hash varchar(64),
      email_change_expires_at ${t.timestamp},
      created_at ${t.timestamp} NOT NULL,
      updated_at ${t.timestamp} NOT NULL
    )`,
    `INSERT INTO accounts (id, email, password_hash, ${LINK_COLUMNS.join(', ')}, created_at, updated_at)
      SELECT 'acc_' || substr(id, 5), email, password_hash, ${LINK_COLUMNS.join(', ')}, created_at, updated_at
      FROM users`,
    `CREATE UNIQUE INDEX uq_accounts_email ON accounts (email)`,
    `CREATE UNIQUE INDEX uq_accounts_password_reset_hash ON accounts (password_reset_hash)`,
    `CREATE UNIQUE INDEX uq_accounts_email_change_hash ON accounts (email_change_hash)`,
    // SQLite can neither add NOT NULL to a column nor drop one with a foreign key (the down),
    // so there the column is plain and the application keeps it set and deletes users first.
    dialect === 'postgres'
      ? `ALTER TABLE users ADD COLUMN account_id varchar(32) REFERENCES accounts (id) ON DELETE CASCADE`
      : `ALTER TABLE users ADD COLUMN account_id varchar(32)`,
    `UPDATE users SET account_id = 'acc_' || substr(id, 5)`,
    ...(dialect === 'postgres' ? [`ALTER TABLE users ALTER COLUMN account_id SET NOT NULL`] : []),
    `DROP INDEX idx_users_email`,
    `DROP INDEX uq_users_password_reset_hash`,
    `DROP INDEX uq_users_email_change_hash`,
    ...LINK_COLUMNS.map((column) => `ALTER TABLE users DROP COLUMN ${column}`),
    `CREATE UNIQUE INDEX uq_users_organization_email ON users (organization_id, email)`,
    `CREATE UNIQUE INDEX uq_users_account_organization ON users (account_id, organization_id)`,
  ],
  (t, dialect) => [
    `DROP INDEX uq_users_account_organization`,
    `DROP INDEX uq_users_organization_email`,
    // A user of an account with several is not restorable as a person of its own: the down
    // keeps each account's oldest user, as before the split.
    `DELETE FROM users WHERE id NOT IN (SELECT MIN(id) FROM users GROUP BY account_id)`,
    // PostgreSQL alters no table with checks of that delete still pending (deferred keys).
    ...(dialect === 'postgres' ? [`SET CONSTRAINTS ALL IMMEDIATE`] : []),
    `ALTER TABLE users ADD COLUMN password_reset_hash varchar(64)`,
    `ALTER TABLE users ADD COLUMN password_reset_expires_at ${t.timestamp}`,
    `ALTER TABLE users ADD COLUMN pending_email varchar(320)`,
    `ALTER TABLE users ADD COLUMN email_change_hash varchar(64)`,
    `ALTER TABLE users ADD COLUMN email_change_expires_at ${t.timestamp}`,
    ...['password_hash', ...LINK_COLUMNS].map(
      (column) =>
        `UPDATE users SET ${column} = (SELECT a.${column} FROM accounts a WHERE a.id = users.account_id)`,
    ),
    `CREATE UNIQUE INDEX idx_users_email ON users (email)`,
    `CREATE UNIQUE INDEX uq_users_password_reset_hash ON users (password_reset_hash)`,
    `CREATE UNIQUE INDEX uq_users_email_change_hash ON users (email_change_hash)`,
    `ALTER TABLE users DROP COLUMN account_id`,
    `DROP TABLE accounts`,
  ],
);
