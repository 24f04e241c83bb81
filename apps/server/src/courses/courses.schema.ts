import type { ModuleSchema } from '../database/module-schema';
import { Course } from './course.entity';
import { coursesExternalIdMigration } from './migrations/1767600000001-courses-external-id';

export const COURSES_SCHEMA: ModuleSchema = {
  entities: [Course],
  migrations: [coursesExternalIdMigration],
};
