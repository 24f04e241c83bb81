import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import {
  contract,
  EXAM_DELETE_REFUSAL,
  ExamSchema,
  type Exam as ExamResource,
  type ExamCreateSchema,
  ExamUpdateSchema,
} from '@platform/contract';
import type { EntityManager, Repository } from 'typeorm';
import type { z } from 'zod';
import type { Principal } from '../common/principal';
import { OwnedRecordsFactory, PatchableResourceService } from '../common/owned-records';
import { ProblemException } from '../common/problem.exception';
import { CoursesService } from '../courses/courses.service';
import { ExamResult } from './exam-result.entity';
import { Exam } from './exam.entity';

@Injectable()
export class ExamsService extends PatchableResourceService<Exam, ExamResource, 'exam'> {
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
    return this.records.create(principal.organizationId, async (manager) => {
      const course = await this.courses.referenced(manager, principal, input, 'course_id');
      return {
        courseId: course.id,
        externalId: input.external_id ?? null,
        title: input.title,
        maxScore: input.max_score,
        heldOn: input.held_on ?? null,
      };
    });
  }

  protected override async checkUpdate(exam: Exam, manager: EntityManager): Promise<void> {
    const highest = await manager.maximum(ExamResult, 'score', { examId: exam.id });
    if (highest !== null && highest > exam.maxScore) {
      throw new ProblemException(
        'conflict',
        `max_score cannot go below ${highest}, the highest score already recorded for this exam`,
      );
    }
  }

  delete(principal: Principal, id: string) {
    return this.records.delete(principal.organizationId, id, EXAM_DELETE_REFUSAL);
  }
}
