import type { ModuleSchema } from '../database/module-schema';
import { ExamResult } from './exam-result.entity';
import { Exam } from './exam.entity';
import { examsExternalIdMigration } from './migrations/1767700000002-exams-external-id';

export const EXAMS_SCHEMA: ModuleSchema = {
  entities: [Exam, ExamResult],
  migrations: [examsExternalIdMigration],
};
