import { type BatchItem, createBody, upsertBatch } from '../common/batch-upsert';
import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import {
  contract,
  COURSE_DELETE_REFUSAL,
  CourseSchema,
  type Course as CourseResource,
  CourseCreateSchema,
  CourseUpdateSchema,
} from '@platform/contract';
import type { EntityManager, Repository } from 'typeorm';
import type { z } from 'zod';
import type { Principal } from '../common/principal';
import { OwnedRecordsFactory, PatchableResourceService } from '../common/owned-records';
import { invalidField } from '../common/resource-errors';
import { countLiveEnrollments } from '../enrollments/live-enrollments';
import { Course } from './course.entity';

type CourseCreate = z.output<typeof CourseCreateSchema>;

@Injectable()
export class CoursesService extends PatchableResourceService<Course, CourseResource, 'course'> {
  constructor(@InjectRepository(Course) courses: Repository<Course>, owned: OwnedRecordsFactory) {
    super(
      owned.for(courses, {
        object: 'course',
        resource: CourseSchema,
        update: CourseUpdateSchema,
        listQuery: contract.courses.list.query,
        uniqueKey: 'code',
      }),
    );
  }

  create(principal: Principal, input: CourseCreate): Promise<CourseResource> {
    assertDates(input.start_date ?? null, input.end_date ?? null);
    return this.records.create(principal.organizationId, () =>
      this.records.fromBody(input, CourseCreateSchema),
    );
  }

  /** `POST /v1/courses/batch`: each item created or updated by its external id. */
  batchUpsert(principal: Principal, items: readonly BatchItem[]) {
    return upsertBatch(this.records, principal.organizationId, items, {
      create: (item) => {
        const input = createBody(CourseCreateSchema, item);
        assertDates(input.start_date ?? null, input.end_date ?? null);
        return this.records.fromBody(input, CourseCreateSchema);
      },
      check: (course, manager) => this.checkUpdate(course, manager),
    });
  }

  protected override async checkUpdate(course: Course, manager: EntityManager): Promise<void> {
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
  }

  delete(principal: Principal, id: string) {
    return this.records.delete(principal.organizationId, id, COURSE_DELETE_REFUSAL);
  }
}

function assertDates(start: string | null, end: string | null): void {
  if (start && end && end < start)
    throw invalidField('end_date', `must not be before start_date (${start})`);
}
