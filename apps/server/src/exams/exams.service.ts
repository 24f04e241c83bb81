import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import {
  contract,
  type Exam as ExamResource,
  type ExamCreateSchema,
  type ExamUpdateSchema,
} from '@platform/contract';
import type { Repository } from 'typeorm';
import type { z } from 'zod';
import type { Principal } from '../auth/principal';
import { publicId } from '../common/ids';
import { OwnedRecordsFactory, OwnedResourceService } from '../common/owned-records';
import { pick, type UpdatableFields } from '../common/patch';
import { ProblemException } from '../common/problem.exception';
import { toIso } from '../common/timestamp';
import { CoursesService } from '../courses/courses.service';
import { ExamResult } from './exam-result.entity';
import { Exam } from './exam.entity';

export const EXAM_UPDATABLE = {
  title: 'title',
  max_score: 'maxScore',
  held_on: 'heldOn',
} as const satisfies UpdatableFields<z.output<typeof ExamUpdateSchema>, Exam>;

export function toExamResource(exam: Exam): ExamResource {
  return {
    id: publicId('exam', exam.id),
    object: 'exam',
    course_id: publicId('course', exam.courseId),
    title: exam.title,
    max_score: exam.maxScore,
    held_on: exam.heldOn,
    created_at: toIso(exam.createdAt),
    updated_at: toIso(exam.updatedAt),
  };
}

@Injectable()
export class ExamsService extends OwnedResourceService<Exam, ExamResource, 'exam'> {
  constructor(
    @InjectRepository(Exam) exams: Repository<Exam>,
    owned: OwnedRecordsFactory,
    private readonly courses: CoursesService,
  ) {
    super(
      owned.for(exams, {
        object: 'exam',
        toResource: toExamResource,
        listQuery: contract.exams.list.query,
      }),
    );
  }

  create(principal: Principal, input: z.output<typeof ExamCreateSchema>): Promise<ExamResource> {
    const organizationId = principal.organizationId;
    return this.records.create(organizationId, async (manager) => {
      const course = await this.courses.referenced(
        manager,
        organizationId,
        'course_id',
        input.course_id,
      );
      return {
        courseId: course.id,
        title: input.title,
        maxScore: input.max_score,
        heldOn: input.held_on ?? null,
      };
    });
  }

  update(
    principal: Principal,
    id: string,
    input: z.output<typeof ExamUpdateSchema>,
  ): Promise<ExamResource> {
    return this.records.update(principal.organizationId, id, pick(input, EXAM_UPDATABLE), {
      check: async (exam, manager) => {
        const highest = await manager.maximum(ExamResult, 'score', { examId: exam.id });
        if (highest !== null && highest > exam.maxScore) {
          throw new ProblemException(
            'conflict',
            `max_score cannot go below ${highest}, the highest score already recorded for this exam`,
          );
        }
      },
    });
  }

  delete(principal: Principal, id: string) {
    return this.records.delete(principal.organizationId, id, {
      referencedBy: 'exam results',
      instead: 'results are part of the record and are kept',
    });
  }
}
