import type { ModuleSchema } from '../database/module-schema';
import { requestLogsMigration } from './migrations/1766900000000-request-logs';
import { RequestLogRecord } from './request-log.entity';

export const REQUEST_LOGS_SCHEMA: ModuleSchema = {
  entities: [RequestLogRecord],
  migrations: [requestLogsMigration],
};
