import type { ModuleSchema } from '../database/module-schema';
import { requestLogsMigration } from './migrations/1766900000000-request-logs';
import { requestLogPathMigration } from './migrations/1767404800000-request-log-path';
import { RequestLogRecord } from './request-log.entity';

export const REQUEST_LOGS_SCHEMA: ModuleSchema = {
  entities: [RequestLogRecord],
  migrations: [requestLogsMigration, requestLogPathMigration],
};
