import type { ModuleSchema } from '../database/module-schema';
import { AuthVersionRecord } from './auth-version.entity';
import { authVersionMigration } from './migrations/1766400000000-auth-version';
import { authVersionClientScopesMigration } from './migrations/1766600000000-auth-version-client-scopes';
import { PersonalAccessToken } from './personal-access-token.entity';

export const AUTH_SCHEMA: ModuleSchema = {
  entities: [PersonalAccessToken, AuthVersionRecord],
  migrations: [authVersionMigration, authVersionClientScopesMigration],
};
