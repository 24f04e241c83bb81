import type { ModuleSchema } from '../database/module-schema';
import { AccountRecord, OAuthArtifactRecord, OAuthClientRecord, UserRecord } from './entities';
import { oauthMigration } from './migrations/1765000000000-oauth';
import { accountLinksMigration } from './migrations/1768000000000-account-links';
import { sessionDevicesMigration } from './migrations/1769000000000-session-devices';
import { accountsMigration } from './migrations/1769500000000-accounts';

export const OAUTH_SCHEMA: ModuleSchema = {
  entities: [AccountRecord, UserRecord, OAuthClientRecord, OAuthArtifactRecord],
  migrations: [oauthMigration, accountLinksMigration, sessionDevicesMigration, accountsMigration],
};
