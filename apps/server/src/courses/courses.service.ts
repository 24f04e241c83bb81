import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import {
  contract,
  type Course as CourseResource,
  type CourseCreateSchema,
  type CourseUpdateSchema,
} from '@platform/contract';
import { type EntityManager, Not, type Repository } from 'typeorm';
import type { z } from 'zod';
import type { Principal } from '../auth/principal';
import { newId, publicId } from '../common/ids';
import { OwnedRecordsFactory, OwnedResourceService } from '../common/owned-records';
import { pick, type UpdatableFields } from '../common/patch';
import { alreadyExists, invalidField } from '../common/resource-errors';
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
      }),
    );
  }

  create(
    principal: Principal,
    input: z.output<typeof CourseCreateSchema>,
  ): Promise<CourseResource> {
    const organizationId = principal.organizationId;
    assertDates(input.start_date ?? null, input.end_date ?? null);
    return this.records.create(
      organizationId,
      async (manager, now) => {
        await assertCodeFree(manager, organizationId, input.code);
        return {
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
      },
      { conflict: () => codeTaken(input.code) },
    );
  }

  update(
    principal: Principal,
    id: string,
    input: z.output<typeof CourseUpdateSchema>,
  ): Promise<CourseResource> {
    const organizationId = principal.organizationId;
    const { code } = input;
    return this.records.update(organizationId, id, pick(input, COURSE_UPDATABLE), {
      check: async (course, manager) => {
        if (code !== undefined) await assertCodeFree(manager, organizationId, code, course.id);
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
      conflict: code === undefined ? undefined : () => codeTaken(code),
    });
  }

  delete(principal: Principal, id: string) {
    return this.records.delete(principal.organizationId, id, {
      referencedBy: 'enrollments or exams',
      instead: "set its status to 'archived' instead",
    });
  }
}

/** Refuses a code another course of the organization holds (`self`: the course being changed). */
async function assertCodeFree(
  manager: EntityManager,
  organizationId: string,
  code: string,
  self?: string,
): Promise<void> {
  const where = { organizationId, code, ...(self === undefined ? {} : { id: Not(self) }) };
  if (await manager.existsBy(Course, where)) throw codeTaken(code);
}

function codeTaken(code: string) {
  return alreadyExists('code', `A course with code '${code}' already exists`);
}

function assertDates(start: string | null, end: string | null): void {
  if (start && end && end < start)
    throw invalidField('end_date', `must not be before start_date (${start})`);
}
