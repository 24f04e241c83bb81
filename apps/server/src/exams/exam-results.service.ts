import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import {
  contract,
  ExamResultSchema,
  type ExamResult as ExamResultResource,
  ExamResultCreateSchema,
  ExamResultUpdateSchema,
} from '@platform/contract';
import type { EntityManager, Repository } from 'typeorm';
import type { z } from 'zod';
import { type BatchItem, createBody, fixedField, upsertBatch } from '../common/batch-upsert';
import type { Principal } from '../common/principal';
import {
  type Caller,
  OwnedRecordsFactory,
  PatchableResourceService,
} from '../common/owned-records';
import { ProblemException } from '../common/problem.exception';
import { alreadyExists } from '../common/resource-errors';
import { EnrollmentsService } from '../enrollments/enrollments.service';
import { StudentsService } from '../students/students.service';
import { ENROLLED_STATUSES, publishResult, scoreRefusal } from './exam-result-rules';
import { ExamResult } from './exam-result.entity';
import { ExamsService } from './exams.service';

type ExamResultCreate = z.output<typeof ExamResultCreateSchema>;

@Injectable()
export class ExamResultsService extends PatchableResourceService<
  ExamResult,
  ExamResultResource,
  'exam_result'
> {
  constructor(
    @InjectRepository(ExamResult) results: Repository<ExamResult>,
    owned: OwnedRecordsFactory,
    private readonly exams: ExamsService,
    private readonly students: StudentsService,
    private readonly enrollments: EnrollmentsService,
  ) {
    super(
      owned.for(results, {
        object: 'exam_result',
        noun: 'exam result',
        resource: ExamResultSchema,
        update: ExamResultUpdateSchema,
        listQuery: contract.examResults.list.query,
      }),
    );
  }

  create(principal: Principal, input: ExamResultCreate): Promise<ExamResultResource> {
    return this.records.create(
      principal.organizationId,
      (manager) => this.build(manager, principal, input, []),
      { conflict: resultExists },
    );
  }

  /** `POST /v1/exam_results/batch`: each item recorded or corrected by its external id. */
  batchUpsert(principal: Principal, items: readonly BatchItem[]) {
    return upsertBatch(this.records, principal.organizationId, items, {
      create: (item, manager, made) =>
        this.build(manager, principal, createBody(ExamResultCreateSchema, item), made),
      check: (result, manager) => this.checkUpdate(result, manager, principal),
      fixed: async (result, { exam_id, student_id }, manager) => {
        if (typeof exam_id === 'string') {
          const exam = await this.exams.referenced(manager, principal, { exam_id }, 'exam_id');
          if (exam.id !== result.examId) throw fixedField('exam_id', 'exam', result.examId);
        }
        if (typeof student_id === 'string') {
          const body = { student_id };
          const student = await this.students.referenced(manager, principal, body, 'student_id');
          if (student.id !== result.studentId)
            throw fixedField('student_id', 'student', result.studentId);
        }
      },
    });
  }

  /** A new result's row; `made`: results a batch has made before it (one per student and exam). */
  private async build(
    manager: EntityManager,
    principal: Principal,
    input: ExamResultCreate,
    made: readonly ExamResult[],
  ) {
    const exam = await this.exams.referenced(manager, principal, input, 'exam_id');
    const student = await this.students.referenced(manager, principal, input, 'student_id');
    const badScore = scoreRefusal(input.score, exam);
    if (badScore) throw badScore;
    if (
      !(await this.enrollments.hasEnrollment(manager, student.id, exam.courseId, ENROLLED_STATUSES))
    ) {
      throw new ProblemException(
        'conflict',
        `Student ${student.id} has no active or completed enrollment in course ${exam.courseId}`,
      );
    }
    const same = (r: Pick<ExamResult, 'examId' | 'studentId'>) =>
      r.examId === exam.id && r.studentId === student.id;
    if (
      made.some(same) ||
      (await manager.existsBy(ExamResult, { examId: exam.id, studentId: student.id }))
    )
      throw resultExists();
    return {
      examId: exam.id,
      studentId: student.id,
      externalId: input.external_id ?? null,
      score: input.score,
      grade: input.grade ?? null,
      status: 'draft' as const,
      publishedAt: null,
    };
  }

  /** Drafts and published results alike: correcting a published result is an update event. */
  protected override async checkUpdate(result: ExamResult, manager: EntityManager, caller: Caller) {
    const { examId: exam_id } = result;
    const exam = await this.exams.referenced(manager, caller, { exam_id }, 'exam_id');
    const badScore = scoreRefusal(result.score, exam);
    if (badScore) throw badScore;
  }

  publish(principal: Principal, id: string): Promise<ExamResultResource> {
    return this.records.change(
      principal.organizationId,
      id,
      'exam_result.published',
      publishResult,
    );
  }
}

function resultExists() {
  return alreadyExists(
    'student_id',
    'This student already has a result for this exam; update it instead',
  );
}
