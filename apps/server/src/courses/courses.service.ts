import { Inject, Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import {
  contract,
  type Course as CourseResource,
  type CourseCreateSchema,
  type CourseUpdateSchema,
  type ListQuery,
} from '@platform/contract';
import type { EntityManager, Repository } from 'typeorm';
import type { z } from 'zod';
import type { Principal } from '../auth/principal';
import { deleteOwned } from '../common/delete-owned';
import { newId, publicId } from '../common/ids';
import type { PageUrl } from '../common/list/page-envelope';
import { OwnedRecords } from '../common/owned-records';
import { applyPatch, pick, type UpdatableFields } from '../common/patch';
import { alreadyExists, invalidField, isUniqueViolation } from '../common/resource-errors';
import { toIso } from '../common/timestamp';
import { TransactionRunner } from '../common/transactions';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/env';
import { countLiveEnrollments } from '../enrollments/live-enrollments';
import { Sql } from '../database/sql';
import { EventsService } from '../events/events.service';
import { Course } from './course.entity';

export const COURSE_UPDATABLE = {
  code: 'code',
  title: 'title',
  description: 'description',
  status: 'status',
  start_date: 'startDate',
  end_date: 'endDate',
  capacity: 'capacity',
} as const satisfies UpdatableFields<z.output<typeof CourseUpdateSchema>, Course>;

export function toCourseResource(course: Course): CourseResource {
  return {
    id: publicId('course', course.id),
    object: 'course',
    code: course.code,
    title: course.title,
    description: course.description,
    status: course.status,
    start_date: course.startDate,
    end_date: course.endDate,
    capacity: course.capacity,
    created_at: toIso(course.createdAt),
    updated_at: toIso(course.updatedAt),
  };
}

@Injectable()
export class CoursesService {
  private readonly records: OwnedRecords<Course, CourseResource>;

  constructor(
    @InjectRepository(Course) private readonly courses: Repository<Course>,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly transactions: TransactionRunner,
    private readonly events: EventsService,
    sql: Sql,
  ) {
    this.records = new OwnedRecords(
      sql,
      courses,
      'course',
      toCourseResource,
      contract.courses.list.query,
    );
  }

  async list(principal: Principal, query: ListQuery, url: PageUrl) {
    return this.records.list(principal.organizationId, query, url, this.config);
  }

  async retrieve(principal: Principal, id: string): Promise<CourseResource> {
    return this.records.retrieve(principal.organizationId, id);
  }

  findInOrganization(
    manager: EntityManager,
    organizationId: string,
    id: string,
  ): Promise<Course | null> {
    return manager.findOneBy(Course, { id, organizationId });
  }

  async create(
    principal: Principal,
    input: z.output<typeof CourseCreateSchema>,
  ): Promise<CourseResource> {
    const organizationId = principal.organizationId;
    assertDates(input.start_date ?? null, input.end_date ?? null);
    return this.write(input.code, () =>
      this.transactions.run(async (manager) => {
        await this.assertCodeFree(manager, organizationId, input.code);
        const now = new Date();
        const course: Course = {
          id: newId('course', now.getTime()),
          organizationId,
          code: input.code,
          title: input.title,
          description: input.description ?? null,
          status: input.status,
          startDate: input.start_date ?? null,
          endDate: input.end_date ?? null,
          capacity: input.capacity ?? null,
          createdAt: now,
          updatedAt: now,
        };
        await manager.insert(Course, course);
        const resource = toCourseResource(course);
        await this.events.record(manager, organizationId, 'course.created', resource, now);
        return resource;
      }),
    );
  }

  async update(
    principal: Principal,
    id: string,
    input: z.output<typeof CourseUpdateSchema>,
  ): Promise<CourseResource> {
    const organizationId = principal.organizationId;
    return this.write(input.code, () =>
      this.transactions.run(async (manager) => {
        const course = await this.records.findForUpdate(manager, organizationId, id);
        if (input.code !== undefined && input.code !== course.code) {
          await this.assertCodeFree(manager, organizationId, input.code);
        }
        if (!applyPatch(course, pick(input, COURSE_UPDATABLE))) return toCourseResource(course);
        assertDates(course.startDate, course.endDate);
        if (course.capacity !== null) {
          const live = await countLiveEnrollments(manager, course.id);
          if (course.capacity < live) {
            throw invalidField(
              'capacity',
              `must be at least ${live}, the live enrollments of this course`,
            );
          }
        }
        course.updatedAt = new Date();
        await manager.save(Course, course);
        const resource = toCourseResource(course);
        await this.events.record(
          manager,
          organizationId,
          'course.updated',
          resource,
          course.updatedAt,
        );
        return resource;
      }),
    );
  }

  delete(principal: Principal, id: string) {
    return deleteOwned(this.transactions, this.events, {
      entity: Course,
      object: 'course',
      organizationId: principal.organizationId,
      id,
      referencedBy: 'enrollments or exams',
      instead: "set its status to 'archived' instead",
    });
  }

  private async assertCodeFree(
    manager: EntityManager,
    organizationId: string,
    code: string,
  ): Promise<void> {
    if (await manager.existsBy(Course, { organizationId, code })) throw codeTaken(code);
  }

  private async write<T>(code: string | undefined, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      if (code !== undefined && isUniqueViolation(error)) throw codeTaken(code);
      throw error;
    }
  }
}

function codeTaken(code: string) {
  return alreadyExists('code', `A course with code '${code}' already exists`);
}

function assertDates(start: string | null, end: string | null): void {
  if (start && end && end < start)
    throw invalidField('end_date', `must not be before start_date (${start})`);
}
