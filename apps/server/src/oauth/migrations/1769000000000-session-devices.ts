import { statementsMigration } from '../../database/migration';

/**
 * Where and when each sign-in session, grant and token was last saved by a request (the
 * User-Agent, the client IP, the time), for "my sessions". Null on rows saved before, and on
 * rows saved outside a request.
 */
export const sessionDevicesMigration = statementsMigration(
  'SessionDevices1769000000000',
  (t) => [
    `ALTER TABLE oauth_artifacts ADD COLUMN user_agent varchar(300)`,
    `ALTER TABLE oauth_artifacts ADD COLUMN ip varchar(64)`,
    `ALTER TABLE oauth_artifacts ADD COLUMN last_used_at ${t.timestamp}`,
  ],
  () => [
    `ALTER TABLE oauth_artifacts DROP COLUMN last_used_at`,
    `ALTER TABLE oauth_artifacts DROP COLUMN ip`,
    `ALTER TABLE oauth_artifacts DROP COLUMN user_agent`,
  ],
);
