import type { ModuleSchema } from '../database/module-schema';
import { IdempotencyKey } from './idempotency-key.entity';
import { idempotencyKeysMigration } from './migrations/1763900000001-idempotency-keys';

export const IDEMPOTENCY_SCHEMA: ModuleSchema = {
  entities: [IdempotencyKey],
  migrations: [idempotencyKeysMigration],
};
