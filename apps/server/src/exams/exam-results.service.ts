import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import {
  contract,
  type ExamResult as ExamResultResource,
  type ExamResultCreateSchema,
  type ExamResultUpdateSchema,
  type ListQuery,
} from '@platform/contract';
import type { Repository } from 'typeorm';
import type { z } from 'zod';
import type { Principal } from '../auth/principal';
import { newId, publicId } from '../common/ids';
import type { PageUrl } from '../common/list/page-envelope';
import { OwnedRecords } from '../common/owned-records';
import { applyPatch, pick, type UpdatableFields } from '../common/patch';
import { ProblemException } from '../common/problem.exception';
import { alreadyExists, isUniqueViolation, unknownReference } from '../common/resource-errors';
import { toIso } from '../common/timestamp';
import { TransactionRunner } from '../common/transactions';
import { EnrollmentsService } from '../enrollments/enrollments.service';
import { Sql } from '../database/sql';
import { EventsService } from '../events/events.service';
import { StudentsService } from '../students/students.service';
import { ENROLLED_STATUSES, publishResult, scoreRefusal } from './exam-result-rules';
import { ExamResult } from './exam-result.entity';
import { ExamsService } from './exams.service';

export const EXAM_RESULT_UPDATABLE = {
  score: 'score',
  grade: 'grade',
} as const satisfies UpdatableFields<z.output<typeof ExamResultUpdateSchema>, ExamResult>;

export function toExamResultResource(result: ExamResult): ExamResultResource {
  return {
    id: publicId('exam_result', result.id),
    object: 'exam_result',
    exam_id: publicId('exam', result.examId),
    student_id: publicId('student', result.studentId),
    score: result.score,
    grade: result.grade,
    status: result.status,
    published_at: result.publishedAt ? toIso(result.publishedAt) : null,
    created_at: toIso(result.createdAt),
    updated_at: toIso(result.updatedAt),
  };
}

@Injectable()
export class ExamResultsService {
  private readonly records: OwnedRecords<ExamResult, ExamResultResource>;

  constructor(
    @InjectRepository(ExamResult) private readonly results: Repository<ExamResult>,
    private readonly transactions: TransactionRunner,
    private readonly events: EventsService,
    private readonly exams: ExamsService,
    private readonly students: StudentsService,
    private readonly enrollments: EnrollmentsService,
    sql: Sql,
  ) {
    this.records = new OwnedRecords(
      sql,
      results,
      'exam result',
      toExamResultResource,
      contract.examResults.list.query,
    );
  }

  async list(principal: Principal, query: ListQuery, url: PageUrl) {
    return this.records.list(principal.organizationId, query, url);
  }

  async retrieve(principal: Principal, id: string): Promise<ExamResultResource> {
    return this.records.retrieve(principal.organizationId, id);
  }

  async create(
    principal: Principal,
    input: z.output<typeof ExamResultCreateSchema>,
  ): Promise<ExamResultResource> {
    const organizationId = principal.organizationId;
    try {
      return await this.transactions.run(async (manager) => {
        const exam = await this.exams.findInOrganization(manager, organizationId, input.exam_id);
        if (!exam) throw unknownReference('exam_id', 'exam', input.exam_id);
        const student = await this.students.findInOrganization(
          manager,
          organizationId,
          input.student_id,
        );
        if (!student) throw unknownReference('student_id', 'student', input.student_id);
        const badScore = scoreRefusal(input.score, exam);
        if (badScore) throw badScore;
        if (
          !(await this.enrollments.hasEnrollment(
            manager,
            student.id,
            exam.courseId,
            ENROLLED_STATUSES,
          ))
        ) {
          throw new ProblemException(
            'conflict',
            `Student ${student.id} has no active or completed enrollment in course ${exam.courseId}`,
          );
        }
        if (await manager.existsBy(ExamResult, { examId: exam.id, studentId: student.id }))
          throw resultExists();
        const now = new Date();
        const result: ExamResult = {
          id: newId('exam_result', now.getTime()),
          organizationId,
          examId: exam.id,
          studentId: student.id,
          score: input.score,
          grade: input.grade ?? null,
          status: 'draft',
          publishedAt: null,
          createdAt: now,
          updatedAt: now,
        };
        await manager.insert(ExamResult, result);
        const resource = toExamResultResource(result);
        await this.events.record(manager, organizationId, 'exam_result.created', resource, now);
        return resource;
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw resultExists();
      throw error;
    }
  }

  /** Drafts and published results alike: correcting a published result is an update event. */
  async update(
    principal: Principal,
    id: string,
    input: z.output<typeof ExamResultUpdateSchema>,
  ): Promise<ExamResultResource> {
    const organizationId = principal.organizationId;
    return this.transactions.run(async (manager) => {
      const result = await this.records.findForUpdate(manager, organizationId, id);
      if (!applyPatch(result, pick(input, EXAM_RESULT_UPDATABLE)))
        return toExamResultResource(result);
      const exam = await this.exams.findInOrganization(manager, organizationId, result.examId);
      const badScore = exam && scoreRefusal(result.score, exam);
      if (badScore) throw badScore;
      result.updatedAt = new Date();
      await manager.save(ExamResult, result);
      const resource = toExamResultResource(result);
      await this.events.record(
        manager,
        organizationId,
        'exam_result.updated',
        resource,
        result.updatedAt,
      );
      return resource;
    });
  }

  async publish(principal: Principal, id: string): Promise<ExamResultResource> {
    const organizationId = principal.organizationId;
    return this.transactions.run(async (manager) => {
      const result = await this.records.findForUpdate(manager, organizationId, id);
      const now = new Date();
      publishResult(result, now);
      await manager.save(ExamResult, result);
      const resource = toExamResultResource(result);
      await this.events.record(manager, organizationId, 'exam_result.published', resource, now);
      return resource;
    });
  }
}

function resultExists() {
  return alreadyExists(
    'student_id',
    'This student already has a result for this exam; update it instead',
  );
}
