import type { ModuleSchema } from '../database/module-schema';
import { studentsStatusIndexMigration } from './migrations/1766300000000-students-status-index';
import { Student } from './student.entity';

export const STUDENTS_SCHEMA: ModuleSchema = {
  entities: [Student],
  migrations: [studentsStatusIndexMigration],
};
