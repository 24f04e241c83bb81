import type { ModuleSchema } from '../database/module-schema';
import { Course } from './course.entity';

export const COURSES_SCHEMA: ModuleSchema = { entities: [Course], migrations: [] };
