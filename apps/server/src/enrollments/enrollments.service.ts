import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import {
  contract,
  ENROLLMENT_TRANSITIONS,
  type Enrollment as EnrollmentResource,
  type EnrollmentCreateSchema,
  type EnrollmentTransition,
  type EnrollmentUpdateSchema,
  type ListQuery,
} from '@platform/contract';
import { type EntityManager, In, type Repository } from 'typeorm';
import type { z } from 'zod';
import type { Principal } from '../auth/principal';
import { lockOwned } from '../common/find-owned';
import { newId, publicId } from '../common/ids';
import type { PageUrl } from '../common/list/page-envelope';
import { OwnedRecords } from '../common/owned-records';
import { ProblemException } from '../common/problem.exception';
import { applyPatch, pick, type UpdatableFields } from '../common/patch';
import { isUniqueViolation, unknownReference } from '../common/resource-errors';
import { toIso } from '../common/timestamp';
import { TransactionRunner } from '../common/transactions';
import { Course } from '../courses/course.entity';
import { CoursesService } from '../courses/courses.service';
import { Sql } from '../database/sql';
import { EventsService } from '../events/events.service';
import { StudentsService } from '../students/students.service';
import { Enrollment } from './enrollment.entity';
import { alreadyEnrolled, applyTransition, courseFull, hasFreeSeat } from './enrollment-rules';
import { countLiveEnrollments, findLiveEnrollment } from './live-enrollments';

export const ENROLLMENT_UPDATABLE = {
  notes: 'notes',
} as const satisfies UpdatableFields<z.output<typeof EnrollmentUpdateSchema>, Enrollment>;

export function toEnrollmentResource(enrollment: Enrollment): EnrollmentResource {
  const iso = (d: Date | null) => (d ? toIso(d) : null);
  return {
    id: publicId('enrollment', enrollment.id),
    object: 'enrollment',
    student_id: publicId('student', enrollment.studentId),
    course_id: publicId('course', enrollment.courseId),
    status: enrollment.status,
    notes: enrollment.notes,
    activated_at: iso(enrollment.activatedAt),
    completed_at: iso(enrollment.completedAt),
    dropped_at: iso(enrollment.droppedAt),
    cancelled_at: iso(enrollment.cancelledAt),
    created_at: toIso(enrollment.createdAt),
    updated_at: toIso(enrollment.updatedAt),
  };
}

@Injectable()
export class EnrollmentsService {
  private readonly records: OwnedRecords<Enrollment, EnrollmentResource>;

  constructor(
    @InjectRepository(Enrollment) private readonly enrollments: Repository<Enrollment>,
    private readonly transactions: TransactionRunner,
    private readonly events: EventsService,
    private readonly students: StudentsService,
    private readonly courses: CoursesService,
    private readonly sql: Sql,
  ) {
    this.records = new OwnedRecords(
      sql,
      enrollments,
      'enrollment',
      toEnrollmentResource,
      contract.enrollments.list.query,
    );
  }

  async list(principal: Principal, query: ListQuery, url: PageUrl) {
    return this.records.list(principal.organizationId, query, url);
  }

  async retrieve(principal: Principal, id: string): Promise<EnrollmentResource> {
    return this.records.retrieve(principal.organizationId, id);
  }

  findInOrganization(
    manager: EntityManager,
    organizationId: string,
    id: string,
  ): Promise<Enrollment | null> {
    return manager.findOneBy(Enrollment, { id, organizationId });
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

  async create(
    principal: Principal,
    input: z.output<typeof EnrollmentCreateSchema>,
  ): Promise<EnrollmentResource> {
    const organizationId = principal.organizationId;
    try {
      return await this.transactions.run(async (manager) => {
        const student = await this.students.findInOrganization(
          manager,
          organizationId,
          input.student_id,
        );
        if (!student) throw unknownReference('student_id', 'student', input.student_id);
        // The course row lock serialises seat counting between concurrent enrollments.
        await lockOwned(this.sql, manager, Course, organizationId, input.course_id);
        const course = await this.courses.findInOrganization(
          manager,
          organizationId,
          input.course_id,
        );
        if (!course) throw unknownReference('course_id', 'course', input.course_id);
        if (course.status === 'archived') {
          throw new ProblemException(
            'conflict',
            `Course ${course.id} is archived and takes no new enrollments`,
          );
        }
        const live = await findLiveEnrollment(manager, student.id, course.id);
        if (live) throw alreadyEnrolled(live.id);
        // Seats are counted only where there is a limit.
        if (
          course.capacity !== null &&
          !hasFreeSeat(course, await countLiveEnrollments(manager, course.id))
        ) {
          throw courseFull(course);
        }
        const now = new Date();
        const enrollment: Enrollment = {
          id: newId('enrollment', now.getTime()),
          organizationId,
          studentId: student.id,
          courseId: course.id,
          status: input.status,
          notes: input.notes ?? null,
          activatedAt: input.status === 'active' ? now : null,
          completedAt: null,
          droppedAt: null,
          cancelledAt: null,
          createdAt: now,
          updatedAt: now,
        };
        await manager.insert(Enrollment, enrollment);
        const resource = toEnrollmentResource(enrollment);
        await this.events.record(manager, organizationId, 'enrollment.created', resource, now);
        return resource;
      });
    } catch (error) {
      // The partial unique index on live enrollments closes the race the check above leaves open.
      if (isUniqueViolation(error)) throw alreadyEnrolled();
      throw error;
    }
  }

  async update(
    principal: Principal,
    id: string,
    input: z.output<typeof EnrollmentUpdateSchema>,
  ): Promise<EnrollmentResource> {
    const organizationId = principal.organizationId;
    return this.transactions.run(async (manager) => {
      const enrollment = await this.records.find(manager, organizationId, id);
      if (!applyPatch(enrollment, pick(input, ENROLLMENT_UPDATABLE)))
        return toEnrollmentResource(enrollment);
      enrollment.updatedAt = new Date();
      await manager.save(Enrollment, enrollment);
      const resource = toEnrollmentResource(enrollment);
      await this.events.record(
        manager,
        organizationId,
        'enrollment.updated',
        resource,
        enrollment.updatedAt,
      );
      return resource;
    });
  }

  async transition(
    principal: Principal,
    id: string,
    transition: EnrollmentTransition,
  ): Promise<EnrollmentResource> {
    const organizationId = principal.organizationId;
    return this.transactions.run(async (manager) => {
      const enrollment = await this.records.findForUpdate(manager, organizationId, id);
      const now = new Date();
      applyTransition(enrollment, transition, now);
      await manager.save(Enrollment, enrollment);
      const resource = toEnrollmentResource(enrollment);
      const { to } = ENROLLMENT_TRANSITIONS[transition];
      await this.events.record(manager, organizationId, `enrollment.${to}`, resource, now);
      return resource;
    });
  }
}
