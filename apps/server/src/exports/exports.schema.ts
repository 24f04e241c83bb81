import type { ModuleSchema } from '../database/module-schema';
import { ExportDownloadLinkRecord } from './export-download-link.entity';
import { ExportRecord } from './export.entity';
import { exportsMigration } from './migrations/1767000000000-exports';
import { exportDownloadLinksMigration } from './migrations/1767100000000-export-download-links';
import { exportBatchesMigration } from './migrations/1767500000000-export-batches';

export const EXPORTS_SCHEMA: ModuleSchema = {
  entities: [ExportRecord, ExportDownloadLinkRecord],
  migrations: [exportsMigration, exportDownloadLinksMigration, exportBatchesMigration],
};
