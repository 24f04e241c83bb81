import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import {
  contract,
  type Course as CourseResource,
  type CourseCreateSchema,
  type CourseUpdateSchema,
} from '@platform/contract';
import type { Repository } from 'typeorm';
import type { z } from 'zod';
import type { Principal } from '../auth/principal';
import { publicId } from '../common/ids';
import { OwnedRecordsFactory, OwnedResourceService } from '../common/owned-records';
import { fromBody, pick, type UpdatableFields } from '../common/patch';
import { invalidField } from '../common/resource-errors';
import { toIso } from '../common/timestamp';
import { countLiveEnrollments } from '../enrollments/live-enrollments';
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
export class CoursesService extends OwnedResourceService<Course, CourseResource, 'course'> {
  constructor(@InjectRepository(Course) courses: Repository<Course>, owned: OwnedRecordsFactory) {
    super(
      owned.for(courses, {
        object: 'course',
        toResource: toCourseResource,
        listQuery: contract.courses.list.query,
        uniqueKey: { field: 'code', property: 'code' },
      }),
    );
  }

  create(
    principal: Principal,
    input: z.output<typeof CourseCreateSchema>,
  ): Promise<CourseResource> {
    assertDates(input.start_date ?? null, input.end_date ?? null);
    return this.records.create(principal.organizationId, () =>
      fromBody<typeof input, Course, typeof COURSE_UPDATABLE>(input, COURSE_UPDATABLE),
    );
  }

  update(
    principal: Principal,
    id: string,
    input: z.output<typeof CourseUpdateSchema>,
  ): Promise<CourseResource> {
    return this.records.update(principal.organizationId, id, pick(input, COURSE_UPDATABLE), {
      check: async (course, manager) => {
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
      },
    });
  }

  delete(principal: Principal, id: string) {
    return this.records.delete(principal.organizationId, id, {
      referencedBy: 'enrollments or exams',
      instead: "set its status to 'archived' instead",
    });
  }
}

function assertDates(start: string | null, end: string | null): void {
  if (start && end && end < start)
    throw invalidField('end_date', `must not be before start_date (${start})`);
}
