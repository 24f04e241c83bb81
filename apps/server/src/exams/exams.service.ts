import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import {
  contract,
  ExamSchema,
  type Exam as ExamResource,
  type ExamCreateSchema,
  ExamUpdateSchema,
} from '@platform/contract';
import type { Repository } from 'typeorm';
import type { z } from 'zod';
import type { Principal } from '../auth/principal';
import { OwnedRecordsFactory, OwnedResourceService } from '../common/owned-records';
import { ProblemException } from '../common/problem.exception';
import { CoursesService } from '../courses/courses.service';
import { ExamResult } from './exam-result.entity';
import { Exam } from './exam.entity';

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
        resource: ExamSchema,
        update: ExamUpdateSchema,
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
    return this.records.update(principal.organizationId, id, input, {
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
