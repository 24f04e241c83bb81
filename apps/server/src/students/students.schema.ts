import type { ModuleSchema } from '../database/module-schema';
import { studentsStatusIndexMigration } from './migrations/1766300000000-students-status-index';
import { studentsExternalIdMigration } from './migrations/1767600000000-students-external-id';
import { Student } from './student.entity';

export const STUDENTS_SCHEMA: ModuleSchema = {
  entities: [Student],
  migrations: [studentsStatusIndexMigration, studentsExternalIdMigration],
};
