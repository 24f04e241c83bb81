import type { ModuleSchema } from '../database/module-schema';
import { Student } from './student.entity';

export const STUDENTS_SCHEMA: ModuleSchema = { entities: [Student], migrations: [] };
