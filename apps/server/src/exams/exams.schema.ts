import type { ModuleSchema } from '../database/module-schema';
import { ExamResult } from './exam-result.entity';
import { Exam } from './exam.entity';

export const EXAMS_SCHEMA: ModuleSchema = { entities: [Exam, ExamResult], migrations: [] };
