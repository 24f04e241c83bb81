import type { ModuleSchema } from '../database/module-schema';
import { ExportRecord } from './export.entity';
import { exportsMigration } from './migrations/1767000000000-exports';

export const EXPORTS_SCHEMA: ModuleSchema = {
  entities: [ExportRecord],
  migrations: [exportsMigration],
};
