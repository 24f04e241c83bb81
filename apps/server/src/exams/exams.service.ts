import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import {
  contract,
  EXAM_DELETE_REFUSAL,
  ExamSchema,
  type Exam as ExamResource,
  ExamCreateSchema,
  ExamUpdateSchema,
} from '@platform/contract';
import type { EntityManager, Repository } from 'typeorm';
import type { z } from 'zod';
import { type BatchItem, createBody, fixedField, upsertBatch } from '../common/batch-upsert';
import type { Principal } from '../common/principal';
import { OwnedRecordsFactory, PatchableResourceService } from '../common/owned-records';
import { ProblemException } from '../common/problem.exception';
import { CoursesService } from '../courses/courses.service';
import { ExamResult } from './exam-result.entity';
import { Exam } from './exam.entity';

type ExamCreate = z.output<typeof ExamCreateSchema>;

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

  create(principal: Principal, input: ExamCreate): Promise<ExamResource> {
    return this.records.create(principal.organizationId, (manager) =>
      this.build(manager, principal, input),
    );
  }

  /** `POST /v1/exams/batch`: each item created or updated by its external id. */
  batchUpsert(principal: Principal, items: readonly BatchItem[]) {
    return upsertBatch(this.records, principal.organizationId, items, {
      create: (item, manager) => this.build(manager, principal, createBody(ExamCreateSchema, item)),
      check: (exam, manager) => this.checkUpdate(exam, manager),
      fixed: async (exam, { course_id }, manager) => {
        if (typeof course_id !== 'string') return;
        const course = await this.courses.referenced(
          manager,
          principal,
          { course_id },
          'course_id',
        );
        if (course.id !== exam.courseId) throw fixedField('course_id', 'course', exam.courseId);
      },
    });
  }

  private async build(manager: EntityManager, principal: Principal, input: ExamCreate) {
    const course = await this.courses.referenced(manager, principal, input, 'course_id');
    return {
      courseId: course.id,
      externalId: input.external_id ?? null,
      title: input.title,
      maxScore: input.max_score,
      heldOn: input.held_on ?? null,
    };
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
