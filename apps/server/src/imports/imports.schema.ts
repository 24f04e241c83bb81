import type { ModuleSchema } from '../database/module-schema';
import { ImportErrorRecord, ImportRecord, ImportRowRecord } from './import.entity';
import { importsMigration } from './migrations/1769100000000-imports';
import { importBundlesMigration } from './migrations/1769200000000-import-bundles';

export const IMPORTS_SCHEMA: ModuleSchema = {
  entities: [ImportRecord, ImportRowRecord, ImportErrorRecord],
  migrations: [importsMigration, importBundlesMigration],
};
