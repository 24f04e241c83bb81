import type { EnrollmentStatus } from '@platform/contract';
import { invalidField, invalidTransition } from '../common/resource-errors';
import type { ExamResult } from './exam-result.entity';
import type { Exam } from './exam.entity';

/** A result needs an enrollment in the exam's course that got past `pending`. */
export const ENROLLED_STATUSES = ['active', 'completed'] as const satisfies EnrollmentStatus[];

export function canBeGraded(enrollmentStatus: EnrollmentStatus): boolean {
  return (ENROLLED_STATUSES as readonly EnrollmentStatus[]).includes(enrollmentStatus);
}

/** Why `score` is refused for `exam`, if it is. */
export function scoreRefusal(score: number, exam: Pick<Exam, 'maxScore'>) {
  return score > exam.maxScore
    ? invalidField('score', `must be at most ${exam.maxScore}, the exam's max_score`)
    : undefined;
}

/** A draft result becomes visible; a published one stays as it is (409). */
export function publishResult(result: ExamResult, at: Date): void {
  if (result.status !== 'draft') {
    throw invalidTransition('exam result', result.status, 'published', ['draft']);
  }
  result.status = 'published';
  result.publishedAt = at;
  result.updatedAt = at;
}
