import type { ModuleSchema } from '../database/module-schema';
import { OAuthArtifactRecord, OAuthClientRecord, UserRecord } from './entities';
import { oauthMigration } from './migrations/1765000000000-oauth';
import { passwordResetMigration } from './migrations/1768000000000-password-reset';

export const OAUTH_SCHEMA: ModuleSchema = {
  entities: [UserRecord, OAuthClientRecord, OAuthArtifactRecord],
  migrations: [oauthMigration, passwordResetMigration],
};
