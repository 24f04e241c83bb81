import {
  ENROLLMENT_TRANSITIONS,
  EnrollmentCreateSchema,
  type EnrollmentStatus,
  type EnrollmentTransition,
  type EventType,
  EXTERNAL_ID_PREFIX,
} from '@platform/contract';
import type { EntityManager } from 'typeorm';
import { type BatchItem, type BatchRules, createBody, fixedField } from '../common/batch-upsert';
import type { NewRecord } from '../common/owned-records';
import type { Principal } from '../common/principal';
import { ProblemException } from '../common/problem.exception';
import { Course } from '../courses/course.entity';
import type { CoursesService } from '../courses/courses.service';
import type { Sql } from '../database/sql';
import type { StudentsService } from '../students/students.service';
import type { Enrollment } from './enrollment.entity';
import {
  alreadyEnrolled,
  applyTransition,
  courseFull,
  hasFreeSeat,
  holdsSeat,
  assertTakesEnrollments,
  newEnrollment,
} from './enrollment-rules';
import { countLiveEnrollments, findLiveEnrollment } from './live-enrollments';

interface Services {
  principal: Principal;
  sql: Sql;
  students: StudentsService;
  courses: CoursesService;
}

/** The transition that leads to each state an item may name (none leads back to `pending`). */
const TRANSITION_TO = new Map<EnrollmentStatus, EnrollmentTransition>(
  (Object.keys(ENROLLMENT_TRANSITIONS) as EnrollmentTransition[]).map((name) => [
    ENROLLMENT_TRANSITIONS[name].to,
    name,
  ]),
);

/**
 * One run of an enrollments batch: the create and transition rules of single requests, with seats
 * and live enrollments counted across the batch's own items too. The items' courses are locked
 * up front, in id order (PostgreSQL), as a single create locks its course: seat counts cannot
 * change under the batch, and two batches cannot deadlock on each other's courses.
 */
export class EnrollmentBatchRules implements BatchRules<Enrollment> {
  /** Live enrollments per course, as the batch has left them so far (read on first use). */
  private readonly seats = new Map<string, number>();
  /** Existing enrollments this batch has taken out of the live states. */
  private readonly released = new Set<string>();

  private constructor(private readonly services: Services) {}

  static async start(
    services: Services,
    manager: EntityManager,
    items: readonly BatchItem[],
    existing: ReadonlyMap<string, Enrollment>,
  ): Promise<EnrollmentBatchRules> {
    const { sql, principal } = services;
    if (sql.dialect === 'postgres') {
      const named = items.map((item) => item.course_id).filter((v) => typeof v === 'string');
      const ids = new Set([...existing.values()].map((e) => e.courseId));
      for (const value of named) if (!value.startsWith(EXTERNAL_ID_PREFIX)) ids.add(value);
      const externalIds = named
        .filter((v) => v.startsWith(EXTERNAL_ID_PREFIX))
        .map((v) => v.slice(EXTERNAL_ID_PREFIX.length));
      await manager
        .createQueryBuilder(Course, 'course')
        .select('course.id')
        .where('course.organizationId = :organizationId', principal)
        .andWhere(
          externalIds.length > 0
            ? '(course.id IN (:...ids) OR course.externalId IN (:...externalIds))'
            : 'course.id IN (:...ids)',
          { ids: [...ids, ''], externalIds },
        )
        .orderBy('course.id')
        .setLock('pessimistic_write')
        .getRawMany();
    }
    return new EnrollmentBatchRules(services);
  }

  async create(
    item: BatchItem,
    manager: EntityManager,
    made: readonly Enrollment[],
    at: Date,
  ): Promise<NewRecord<Enrollment>> {
    const { principal, students, courses } = this.services;
    const input = createBody(EnrollmentCreateSchema, item);
    const student = await students.referenced(manager, principal, input, 'student_id');
    const course = await courses.referenced(manager, principal, input, 'course_id');
    assertTakesEnrollments(course);
    const live = await findLiveEnrollment(manager, student.id, course.id);
    if (live && !this.released.has(live.id)) throw alreadyEnrolled(live.id);
    const twin = made.find(
      (e) => e.studentId === student.id && e.courseId === course.id && holdsSeat(e.status),
    );
    if (twin) throw alreadyEnrolled(twin.id);
    const taken = await this.liveIn(manager, course.id);
    if (!hasFreeSeat(course, taken)) throw courseFull(course);
    this.seats.set(course.id, taken + 1);
    return newEnrollment(input, student.id, course.id, at);
  }

  check(): void {}

  async fixed(enrollment: Enrollment, item: BatchItem, manager: EntityManager): Promise<void> {
    const { principal, students, courses } = this.services;
    if (typeof item.student_id === 'string') {
      const body = { student_id: item.student_id };
      const student = await students.referenced(manager, principal, body, 'student_id');
      if (student.id !== enrollment.studentId)
        throw fixedField('student_id', 'student', enrollment.studentId);
    }
    if (typeof item.course_id === 'string') {
      const body = { course_id: item.course_id };
      const course = await courses.referenced(manager, principal, body, 'course_id');
      if (course.id !== enrollment.courseId)
        throw fixedField('course_id', 'course', enrollment.courseId);
    }
  }

  async transition(
    enrollment: Enrollment,
    item: BatchItem,
    manager: EntityManager,
    at: Date,
    moved: (type: EventType) => void,
  ): Promise<void> {
    const status = item.status as EnrollmentStatus | undefined;
    if (status === undefined || status === enrollment.status) return;
    const name = TRANSITION_TO.get(status);
    if (!name) {
      throw new ProblemException(
        'invalid_state_transition',
        `Cannot move this enrollment from '${enrollment.status}' to '${status}'; no enrollment returns to '${status}'`,
      );
    }
    const held = holdsSeat(enrollment.status);
    // Read before the change: the database still counts this enrollment as it was.
    const taken = held ? await this.liveIn(manager, enrollment.courseId) : 0;
    applyTransition(enrollment, name, at);
    if (held && !holdsSeat(enrollment.status)) {
      this.seats.set(enrollment.courseId, taken - 1);
      this.released.add(enrollment.id);
    }
    moved(`enrollment.${status}` as EventType);
  }

  private async liveIn(manager: EntityManager, courseId: string): Promise<number> {
    let live = this.seats.get(courseId);
    if (live === undefined) {
      live = await countLiveEnrollments(manager, courseId);
      this.seats.set(courseId, live);
    }
    return live;
  }
}
