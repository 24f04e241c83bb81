import { LIVE_ENROLLMENT_STATUSES } from '@platform/contract';
import { type EntityManager, In } from 'typeorm';
import { Enrollment } from './enrollment.entity';

/** Live (pending or active) enrollments hold a seat in their course. */
export function countLiveEnrollments(manager: EntityManager, courseId: string): Promise<number> {
  return manager.countBy(Enrollment, { courseId, status: In([...LIVE_ENROLLMENT_STATUSES]) });
}

/** The student's live enrollment in the course, if any (there is at most one). */
export function findLiveEnrollment(
  manager: EntityManager,
  studentId: string,
  courseId: string,
): Promise<Enrollment | null> {
  return manager.findOneBy(Enrollment, {
    studentId,
    courseId,
    status: In([...LIVE_ENROLLMENT_STATUSES]),
  });
}
