import type { ModuleSchema } from '../database/module-schema';
import { OAuthArtifactRecord, OAuthClientRecord, UserRecord } from './entities';
import { oauthMigration } from './migrations/1765000000000-oauth';

export const OAUTH_SCHEMA: ModuleSchema = {
  entities: [UserRecord, OAuthClientRecord, OAuthArtifactRecord],
  migrations: [oauthMigration],
};
