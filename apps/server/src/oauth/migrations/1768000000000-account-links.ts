import { statementsMigration } from '../../database/migration';

/**
 * The links a member is mailed about their own account, kept on the member (gone with them), one
 * of each at a time (a new request replaces it), each as its token's SHA-256 and when it stops
 * working: a password reset, and an email change waiting for the new address to confirm it.
 */
export const accountLinksMigration = statementsMigration(
  'AccountLinks1768000000000',
  (t) => [
    `ALTER TABLE users ADD COLUMN password_reset_hash varchar(64)`,
    `ALTER TABLE users ADD COLUMN password_reset_expires_at ${t.timestamp}`,
    `CREATE UNIQUE INDEX uq_users_password_reset_hash ON users (password_reset_hash)`,
    `ALTER TABLE users ADD COLUMN pending_email varchar(320)`,
    `ALTER TABLE users ADD COLUMN email_change_hash varchar(64)`,
    `ALTER TABLE users ADD COLUMN email_change_expires_at ${t.timestamp}`,
    `CREATE UNIQUE INDEX uq_users_email_change_hash ON users (email_change_hash)`,
  ],
  () => [
    `DROP INDEX uq_users_email_change_hash`,
    `ALTER TABLE users DROP COLUMN email_change_expires_at`,
    `ALTER TABLE users DROP COLUMN email_change_hash`,
    `ALTER TABLE users DROP COLUMN pending_email`,
    `DROP INDEX uq_users_password_reset_hash`,
    `ALTER TABLE users DROP COLUMN password_reset_expires_at`,
    `ALTER TABLE users DROP COLUMN password_reset_hash`,
  ],
);
