import type { ModuleSchema } from '../database/module-schema';
import { Enrollment } from './enrollment.entity';

export const ENROLLMENTS_SCHEMA: ModuleSchema = { entities: [Enrollment], migrations: [] };
