import {
  ENROLLMENT_TRANSITIONS,
  type EnrollmentStatus,
  type EnrollmentTransition,
  LIVE_ENROLLMENT_STATUSES,
} from '@platform/contract';
import { ProblemException } from '../common/problem.exception';
import { alreadyExists, invalidTransition } from '../common/resource-errors';
import type { NewRecord } from '../common/owned-records';
import type { Course } from '../courses/course.entity';
import type { Enrollment } from './enrollment.entity';

/**
 * The enrollment rules, apart from where the facts come from: the service reads them from the
 * database, the demo seed from what it has generated so far, and both ask these functions.
 */

/** Live (pending or active) enrollments hold a seat in their course and block a second one. */
export function holdsSeat(status: EnrollmentStatus): boolean {
  return (LIVE_ENROLLMENT_STATUSES as readonly EnrollmentStatus[]).includes(status);
}

/** Whether `course` has a seat left for a new live enrollment when `taken` seats are held. */
export function hasFreeSeat(course: Pick<Course, 'capacity'>, taken: number): boolean {
  return course.capacity === null || taken < course.capacity;
}

export function courseFull(course: Pick<Course, 'id' | 'capacity'>): ProblemException {
  return new ProblemException(
    'conflict',
    `Course ${course.id} is full (capacity ${course.capacity})`,
  );
}

export function alreadyEnrolled(existingId?: string): ProblemException {
  return alreadyExists(
    'course_id',
    `The student already holds a live (pending or active) enrollment in this course${existingId ? ` (${existingId})` : ''}`,
  );
}

/** An archived course takes no new enrollments (409). */
export function assertTakesEnrollments(course: Pick<Course, 'id' | 'status'>): void {
  if (course.status === 'archived') {
    throw new ProblemException(
      'conflict',
      `Course ${course.id} is archived and takes no new enrollments`,
    );
  }
}

/** A new enrollment of `studentId` in `courseId`, in the state its input starts it in, at `at`. */
export function newEnrollment(
  input: { external_id?: string | null; status: EnrollmentStatus; notes?: string | null },
  studentId: string,
  courseId: string,
  at: Date,
): NewRecord<Enrollment> {
  return {
    studentId,
    courseId,
    externalId: input.external_id ?? null,
    status: input.status,
    notes: input.notes ?? null,
    activatedAt: input.status === 'active' ? at : null,
    completedAt: null,
    droppedAt: null,
    cancelledAt: null,
  };
}

/** The timestamp each target state records. */
const STATE_TIMESTAMP = {
  active: 'activatedAt',
  completed: 'completedAt',
  dropped: 'droppedAt',
  cancelled: 'cancelledAt',
} as const;

/** Moves `enrollment` along the contract's state machine at `at`, or throws the 409. */
export function applyTransition(
  enrollment: Enrollment,
  transition: EnrollmentTransition,
  at: Date,
): void {
  const { to, from } = ENROLLMENT_TRANSITIONS[transition];
  if (!(from as readonly string[]).includes(enrollment.status)) {
    throw invalidTransition('enrollment', enrollment.status, to, from);
  }
  enrollment.status = to;
  enrollment[STATE_TIMESTAMP[to]] = at;
  enrollment.updatedAt = at;
}
