import type { ModuleSchema } from '../database/module-schema';
import { OAuthArtifactRecord, OAuthClientRecord, UserRecord } from './entities';
import { oauthMigration } from './migrations/1765000000000-oauth';
import { accountLinksMigration } from './migrations/1768000000000-account-links';
import { sessionDevicesMigration } from './migrations/1769000000000-session-devices';

export const OAUTH_SCHEMA: ModuleSchema = {
  entities: [UserRecord, OAuthClientRecord, OAuthArtifactRecord],
  migrations: [oauthMigration, accountLinksMigration, sessionDevicesMigration],
};
