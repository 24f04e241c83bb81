import type { ModuleSchema } from '../database/module-schema';
import { Enrollment } from './enrollment.entity';
import { enrollmentsExternalIdMigration } from './migrations/1767700000000-enrollments-external-id';

export const ENROLLMENTS_SCHEMA: ModuleSchema = {
  entities: [Enrollment],
  migrations: [enrollmentsExternalIdMigration],
};
