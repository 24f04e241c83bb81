import { statementsMigration } from '../../database/migration';

/**
 * A member's pending password reset: the hash of the emailed link's token and when it stops
 * working. One at a time (a new request replaces it); gone with the member.
 */
export const passwordResetMigration = statementsMigration(
  'PasswordReset1768000000000',
  (t) => [
    `ALTER TABLE users ADD COLUMN password_reset_hash varchar(64)`,
    `ALTER TABLE users ADD COLUMN password_reset_expires_at ${t.timestamp}`,
    `CREATE UNIQUE INDEX uq_users_password_reset_hash ON users (password_reset_hash)`,
  ],
  () => [
    `DROP INDEX uq_users_password_reset_hash`,
    `ALTER TABLE users DROP COLUMN password_reset_expires_at`,
    `ALTER TABLE users DROP COLUMN password_reset_hash`,
  ],
);
