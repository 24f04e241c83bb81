import type { ModuleSchema } from '../database/module-schema';
import { paymentsExternalIdMigration } from './migrations/1767700000001-payments-external-id';
import { Payment } from './payment.entity';

export const PAYMENTS_SCHEMA: ModuleSchema = {
  entities: [Payment],
  migrations: [paymentsExternalIdMigration],
};
