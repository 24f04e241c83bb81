import type { ModuleSchema } from '../database/module-schema';
import { sandboxesMigration } from './migrations/1769300000000-sandboxes';

/** The columns are the organizations table's (Organization is the organizations module's). */
export const SANDBOXES_SCHEMA: ModuleSchema = { entities: [], migrations: [sandboxesMigration] };
