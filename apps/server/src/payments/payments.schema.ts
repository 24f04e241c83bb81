import type { ModuleSchema } from '../database/module-schema';
import { Payment } from './payment.entity';

export const PAYMENTS_SCHEMA: ModuleSchema = { entities: [Payment], migrations: [] };
