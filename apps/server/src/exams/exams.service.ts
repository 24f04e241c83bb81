import { Inject, Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import {
  contract,
  type Exam as ExamResource,
  type ExamCreateSchema,
  type ExamUpdateSchema,
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
import { ProblemException } from '../common/problem.exception';
import { unknownReference } from '../common/resource-errors';
import { toIso } from '../common/timestamp';
import { TransactionRunner } from '../common/transactions';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/env';
import { CoursesService } from '../courses/courses.service';
import { Sql } from '../database/sql';
import { EventsService } from '../events/events.service';
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
export class ExamsService {
  private readonly records: OwnedRecords<Exam, ExamResource>;

  constructor(
    @InjectRepository(Exam) private readonly exams: Repository<Exam>,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly transactions: TransactionRunner,
    private readonly events: EventsService,
    private readonly courses: CoursesService,
    sql: Sql,
  ) {
    this.records = new OwnedRecords(sql, exams, 'exam', toExamResource, contract.exams.list.query);
  }

  async list(principal: Principal, query: ListQuery, url: PageUrl) {
    return this.records.list(principal.organizationId, query, url, this.config);
  }

  async retrieve(principal: Principal, id: string): Promise<ExamResource> {
    return this.records.retrieve(principal.organizationId, id);
  }

  findInOrganization(
    manager: EntityManager,
    organizationId: string,
    id: string,
  ): Promise<Exam | null> {
    return manager.findOneBy(Exam, { id, organizationId });
  }

  async create(
    principal: Principal,
    input: z.output<typeof ExamCreateSchema>,
  ): Promise<ExamResource> {
    const organizationId = principal.organizationId;
    return this.transactions.run(async (manager) => {
      const course = await this.courses.findInOrganization(
        manager,
        organizationId,
        input.course_id,
      );
      if (!course) throw unknownReference('course_id', 'course', input.course_id);
      const now = new Date();
      const exam: Exam = {
        id: newId('exam', now.getTime()),
        organizationId,
        courseId: course.id,
        title: input.title,
        maxScore: input.max_score,
        heldOn: input.held_on ?? null,
        createdAt: now,
        updatedAt: now,
      };
      await manager.insert(Exam, exam);
      const resource = toExamResource(exam);
      await this.events.record(manager, organizationId, 'exam.created', resource, now);
      return resource;
    });
  }

  async update(
    principal: Principal,
    id: string,
    input: z.output<typeof ExamUpdateSchema>,
  ): Promise<ExamResource> {
    const organizationId = principal.organizationId;
    return this.transactions.run(async (manager) => {
      const exam = await this.records.findForUpdate(manager, organizationId, id);
      if (!applyPatch(exam, pick(input, EXAM_UPDATABLE))) return toExamResource(exam);
      const highest = await manager.maximum(ExamResult, 'score', { examId: exam.id });
      if (highest !== null && highest > exam.maxScore) {
        throw new ProblemException(
          'conflict',
          `max_score cannot go below ${highest}, the highest score already recorded for this exam`,
        );
      }
      exam.updatedAt = new Date();
      await manager.save(Exam, exam);
      const resource = toExamResource(exam);
      await this.events.record(manager, organizationId, 'exam.updated', resource, exam.updatedAt);
      return resource;
    });
  }

  delete(principal: Principal, id: string) {
    return deleteOwned(this.transactions, this.events, {
      entity: Exam,
      object: 'exam',
      organizationId: principal.organizationId,
      id,
      referencedBy: 'exam results',
      instead: 'results are part of the record and are kept',
    });
  }
}
