import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import {
  contract,
  EnrollmentSchema,
  ENROLLMENT_TRANSITIONS,
  type Enrollment as EnrollmentResource,
  type EnrollmentCreateSchema,
  type EnrollmentTransition,
  EnrollmentUpdateSchema,
  EXTERNAL_ID_PREFIX,
} from '@platform/contract';
import { type EntityManager, In, type Repository } from 'typeorm';
import type { z } from 'zod';
import { type BatchItem, upsertBatch } from '../common/batch-upsert';
import type { Principal } from '../common/principal';
import { lockOwned } from '../common/find-owned';
import { OwnedRecordsFactory, PatchableResourceService } from '../common/owned-records';
import { Course } from '../courses/course.entity';
import { CoursesService } from '../courses/courses.service';
import { Sql } from '../database/sql';
import { StudentsService } from '../students/students.service';
import { Enrollment } from './enrollment.entity';
import {
  alreadyEnrolled,
  applyTransition,
  assertTakesEnrollments,
  courseFull,
  hasFreeSeat,
  newEnrollment,
} from './enrollment-rules';
import { EnrollmentBatchRules } from './enrollment-batch';
import { countLiveEnrollments, findLiveEnrollment } from './live-enrollments';

type EnrollmentCreate = z.output<typeof EnrollmentCreateSchema>;

@Injectable()
export class EnrollmentsService extends PatchableResourceService<
  Enrollment,
  EnrollmentResource,
  'enrollment'
> {
  constructor(
    @InjectRepository(Enrollment) enrollments: Repository<Enrollment>,
    owned: OwnedRecordsFactory,
    private readonly students: StudentsService,
    private readonly courses: CoursesService,
    private readonly sql: Sql,
  ) {
    super(
      owned.for(enrollments, {
        object: 'enrollment',
        resource: EnrollmentSchema,
        update: EnrollmentUpdateSchema,
        listQuery: contract.enrollments.list.query,
      }),
    );
  }

  /** Whether the student holds an enrollment in the course in one of these states. */
  hasEnrollment(
    manager: EntityManager,
    studentId: string,
    courseId: string,
    statuses: readonly string[],
  ) {
    return manager.existsBy(Enrollment, {
      studentId,
      courseId,
      status: In([...statuses]) as never,
    });
  }

  create(principal: Principal, input: EnrollmentCreate): Promise<EnrollmentResource> {
    const { organizationId } = principal;
    return this.records.create(
      organizationId,
      async (manager, now) => {
        const student = await this.students.referenced(manager, principal, input, 'student_id');
        // The course row lock serialises seat counting between concurrent enrollments; a course
        // named by `ext:<external_id>` is found first, to lock it by its id.
        const courseId = input.course_id.startsWith(EXTERNAL_ID_PREFIX)
          ? (await this.courses.referenced(manager, principal, input, 'course_id')).id
          : input.course_id;
        await lockOwned(this.sql, manager, Course, organizationId, courseId);
        const course = await this.courses.referenced(
          manager,
          principal,
          { course_id: courseId },
          'course_id',
        );
        assertTakesEnrollments(course);
        const live = await findLiveEnrollment(manager, student.id, course.id);
        if (live) throw alreadyEnrolled(live.id);
        // Seats are counted only where there is a limit.
        if (
          course.capacity !== null &&
          !hasFreeSeat(course, await countLiveEnrollments(manager, course.id))
        ) {
          throw courseFull(course);
        }
        return newEnrollment(input, student.id, course.id, now);
      },
      // The partial unique index on live enrollments closes the race the check above leaves open.
      { conflict: () => alreadyEnrolled() },
    );
  }

  /**
   * `POST /v1/enrollments/batch`: each item created or updated by its external id; an item's
   * `status` moves an existing enrollment along the state machine. Seats and live enrollments are
   * counted across the batch's own items as well as the database's (EnrollmentBatchRules).
   */
  batchUpsert(principal: Principal, items: readonly BatchItem[]) {
    const services = { principal, sql: this.sql, students: this.students, courses: this.courses };
    return upsertBatch(this.records, principal.organizationId, items, (manager, all, existing) =>
      EnrollmentBatchRules.start(services, manager, all, existing),
    );
  }

  transition(
    principal: Principal,
    id: string,
    transition: EnrollmentTransition,
  ): Promise<EnrollmentResource> {
    const { to } = ENROLLMENT_TRANSITIONS[transition];
    return this.records.change(
      principal.organizationId,
      id,
      `enrollment.${to}`,
      (enrollment, now) => applyTransition(enrollment, transition, now),
    );
  }
}
