import type { ModuleSchema } from '../database/module-schema';
import { Organization } from './organization.entity';

export const ORGANIZATIONS_SCHEMA: ModuleSchema = { entities: [Organization], migrations: [] };
