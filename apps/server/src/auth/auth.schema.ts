import type { ModuleSchema } from '../database/module-schema';
import { PersonalAccessToken } from './personal-access-token.entity';

export const AUTH_SCHEMA: ModuleSchema = { entities: [PersonalAccessToken], migrations: [] };
