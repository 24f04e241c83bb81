import { Injectable } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { randomBytes } from 'node:crypto';
import {
  CourseCreateSchema,
  CourseUpdateSchema,
  EnrollmentCreateSchema,
  EnrollmentUpdateSchema,
  ExamCreateSchema,
  ExamResultCreateSchema,
  ExamResultUpdateSchema,
  ExamUpdateSchema,
  PaymentCreateSchema,
  RESOURCES,
  type Scope,
  StudentCreateSchema,
  StudentUpdateSchema,
  type TRIGGER_EVENT_TYPES,
} from '@platform/contract';
import { z } from 'zod';
import { Clock } from '../common/clock';
import { newId } from '../common/ids';
import type { Principal } from '../common/principal';
import { zodErrors } from '../common/problem-details.filter';
import { ProblemException } from '../common/problem.exception';
import { TransactionRunner } from '../common/transactions';
import { CoursesService } from '../courses/courses.service';
import { Course } from '../courses/course.entity';
import { Sql } from '../database/sql';
import { insertRows } from '../database/write-rows';
import { EnrollmentsService } from '../enrollments/enrollments.service';
import { Exam } from '../exams/exam.entity';
import { ExamResultsService } from '../exams/exam-results.service';
import { ExamsService } from '../exams/exams.service';
import { PaymentsService } from '../payments/payments.service';
import { demoSchool } from '../seed/demo-school';
import { demoStudents } from '../seed/demo-students';
import { Student } from '../students/student.entity';
import { StudentsService } from '../students/students.service';

type TriggerEvent = (typeof TRIGGER_EVENT_TYPES)[number];
type Collection = keyof typeof RESOURCES;

/** What each resource's event needs of a token: the resource's write scope. */
const RESOURCE_OF: Record<string, Collection> = {
  student: 'students',
  course: 'courses',
  enrollment: 'enrollments',
  payment: 'payments',
  exam: 'exams',
  exam_result: 'exam_results',
};

/** A record made or changed, as the trigger answers it. */
interface Changed {
  object: string;
  id: string;
}

interface Services {
  students: StudentsService;
  courses: CoursesService;
  enrollments: EnrollmentsService;
  payments: PaymentsService;
  exams: ExamsService;
  results: ExamResultsService;
}

/** What a trigger works with: the caller, the services, and ways to find a starting record. */
interface Trigger {
  p: Principal;
  s: Services;
  overrides: Record<string, unknown>;
  tag: string;
  pick(what: string, sql: string): Promise<string>;
  enrollment(status: string): Promise<string>;
  payment(status: string, extra?: string): Promise<string>;
  pair(): Promise<{ student: string; course: string }>;
  ungraded(): Promise<{ exam: string; student: string }>;
  inserted(kind: 'student' | 'course' | 'exam'): Promise<string>;
}

/** How each event is made to happen: the change, to a record in the state it starts from. */
// Partial: a resource made by `pnpm gen resource` has events before it has a trigger (the
// sandboxes spec triggers every event type, so a missing one fails there).
const TRIGGERS: Partial<Record<TriggerEvent, (t: Trigger) => Promise<Changed>>> = {
  'student.created': (t) =>
    t.s.students.create(
      t.p,
      body(StudentCreateSchema, {
        student_number: `TRG-${t.tag}`,
        first_name: 'Triggered',
        last_name: `Student ${t.tag}`,
        ...t.overrides,
      }),
    ),
  'student.updated': (t) =>
    t
      .pick('a student', `SELECT id FROM students WHERE organization_id = :org`)
      .then((id) =>
        t.s.students.update(
          t.p,
          id,
          body(StudentUpdateSchema, { preferred_name: `Trig ${t.tag}`, ...t.overrides }),
        ),
      ),
  'student.deleted': (t) => t.inserted('student').then((id) => t.s.students.delete(t.p, id)),
  'course.created': (t) =>
    t.s.courses.create(
      t.p,
      body(CourseCreateSchema, {
        code: `TRG-${t.tag}`,
        title: `Triggered course ${t.tag}`,
        ...t.overrides,
      }),
    ),
  'course.updated': (t) =>
    t
      .pick('a course', `SELECT id FROM courses WHERE organization_id = :org`)
      .then((id) =>
        t.s.courses.update(
          t.p,
          id,
          body(CourseUpdateSchema, { description: `Triggered ${t.tag}`, ...t.overrides }),
        ),
      ),
  'course.deleted': (t) => t.inserted('course').then((id) => t.s.courses.delete(t.p, id)),
  'exam.created': (t) =>
    t.pick('a course', `SELECT id FROM courses WHERE organization_id = :org`).then((course) =>
      t.s.exams.create(
        t.p,
        body(ExamCreateSchema, {
          course_id: course,
          title: `Triggered exam ${t.tag}`,
          max_score: 100,
          ...t.overrides,
        }),
      ),
    ),
  'exam.updated': (t) =>
    t
      .pick('an exam', `SELECT id FROM exams WHERE organization_id = :org`)
      .then((id) =>
        t.s.exams.update(
          t.p,
          id,
          body(ExamUpdateSchema, { title: `Triggered exam ${t.tag}`, ...t.overrides }),
        ),
      ),
  'exam.deleted': (t) => t.inserted('exam').then((id) => t.s.exams.delete(t.p, id)),
  'enrollment.created': (t) =>
    t.pair().then(({ student, course }) =>
      t.s.enrollments.create(
        t.p,
        body(EnrollmentCreateSchema, {
          student_id: student,
          course_id: course,
          status: 'pending',
          ...t.overrides,
        }),
      ),
    ),
  'enrollment.updated': (t) =>
    t
      .pick('an enrollment', `SELECT id FROM enrollments WHERE organization_id = :org`)
      .then((id) =>
        t.s.enrollments.update(
          t.p,
          id,
          body(EnrollmentUpdateSchema, { notes: `Triggered ${t.tag}`, ...t.overrides }),
        ),
      ),
  'enrollment.active': (t) =>
    t.enrollment('pending').then((id) => t.s.enrollments.transition(t.p, id, 'activate')),
  'enrollment.completed': (t) =>
    t.enrollment('active').then((id) => t.s.enrollments.transition(t.p, id, 'complete')),
  'enrollment.dropped': (t) =>
    t.enrollment('active').then((id) => t.s.enrollments.transition(t.p, id, 'drop')),
  'enrollment.cancelled': (t) =>
    t.enrollment('pending').then((id) => t.s.enrollments.transition(t.p, id, 'cancel')),
  'payment.created': (t) =>
    t.pick('a student', `SELECT id FROM students WHERE organization_id = :org`).then((student) =>
      t.s.payments.create(
        t.p,
        body(PaymentCreateSchema, {
          student_id: student,
          amount: 2500,
          currency: 'EUR',
          description: `Triggered ${t.tag}`,
          ...t.overrides,
        }),
      ),
    ),
  'payment.succeeded': (t) => t.payment('pending').then((id) => t.s.payments.succeed(t.p, id)),
  'payment.failed': (t) =>
    t
      .payment('pending')
      .then((id) => t.s.payments.fail(t.p, id, { failure_reason: 'card_declined' })),
  'payment.refunded': (t) =>
    t
      .payment('succeeded', ' AND amount_refunded < amount')
      .then((id) => t.s.payments.refund(t.p, id, {})),
  'exam_result.created': (t) =>
    t.ungraded().then(({ exam, student }) =>
      t.s.results.create(
        t.p,
        body(ExamResultCreateSchema, {
          exam_id: exam,
          student_id: student,
          score: 71,
          ...t.overrides,
        }),
      ),
    ),
  'exam_result.updated': (t) =>
    t
      .pick('an exam result', `SELECT id FROM exam_results WHERE organization_id = :org`)
      .then((id) =>
        t.s.results.update(
          t.p,
          id,
          body(ExamResultUpdateSchema, { grade: `T${t.tag.slice(0, 3)}`, ...t.overrides }),
        ),
      ),
  'exam_result.published': (t) =>
    t
      .pick(
        'a draft exam result',
        `SELECT id FROM exam_results WHERE organization_id = :org AND status = 'draft'`,
      )
      .then((id) => t.s.results.publish(t.p, id)),
};

/**
 * `POST /v1/sandbox/trigger` (docs/sandboxes.md): the change that sends the event asked for, made
 * through the resource's own service (its rules and its event), to a record of the sandbox in the
 * state the change starts from. A `*.deleted` event deletes a record made for it first without an
 * event, so that only the deletion is sent.
 */
@Injectable()
export class SandboxTriggerService {
  constructor(
    private readonly modules: ModuleRef,
    private readonly sql: Sql,
    private readonly transactions: TransactionRunner,
    private readonly clock: Clock,
  ) {}

  private services(): Services {
    const get = <T>(type: new (...args: never[]) => T): T =>
      this.modules.get(type, { strict: false });
    return {
      students: get(StudentsService),
      courses: get(CoursesService),
      enrollments: get(EnrollmentsService),
      payments: get(PaymentsService),
      exams: get(ExamsService),
      results: get(ExamResultsService),
    };
  }

  async trigger(principal: Principal, event: TriggerEvent, overrides?: Record<string, unknown>) {
    const [object, action] = event.split('.') as [string, string];
    const scope = `${RESOURCES[RESOURCE_OF[object]!].scope}:write` as Scope;
    if (!principal.scopes.has(scope)) {
      throw new ProblemException(
        'insufficient_scope',
        `Triggering ${event} requires the '${scope}' scope`,
      );
    }
    if (overrides && action !== 'created' && action !== 'updated') {
      throw new ProblemException(
        'validation_error',
        `${event} takes no overrides: only *.created and *.updated events do`,
        {
          errors: [{ path: 'body.overrides', message: 'is not taken', code: 'unknown_parameter' }],
        },
      );
    }
    const since = newId('event', this.clock.nowMs() - 1);
    const changed = await this.change(principal, event, overrides ?? {});
    const [sent] = await this.sql.select<{ id: string }>(
      `SELECT id FROM events WHERE organization_id = :org AND type = :type AND id > :since
       ORDER BY id DESC LIMIT 1`,
      { org: principal.organizationId, type: event, since },
    );
    if (!sent) {
      throw new ProblemException(
        'conflict',
        `The change made no ${event} event: the overrides leave ${changed.object} ${changed.id} as it was`,
      );
    }
    return {
      object: 'sandbox_trigger' as const,
      event: { id: sent.id, type: event },
      record: changed,
    };
  }

  private change(p: Principal, event: TriggerEvent, overrides: Record<string, unknown>) {
    const pick = (what: string, sql: string) => this.pick(p, what, sql);
    const change = TRIGGERS[event];
    if (!change) {
      throw new ProblemException('validation_error', `No trigger makes ${event} happen yet`, {
        errors: [{ path: 'body.event', message: 'has no trigger', code: 'invalid_enum_value' }],
      });
    }
    return change({
      p,
      s: this.services(),
      overrides,
      tag: randomBytes(4).toString('hex').toUpperCase(),
      pick,
      enrollment: (status) =>
        pick(
          `a ${status} enrollment`,
          `SELECT id FROM enrollments WHERE organization_id = :org AND status = '${status}'`,
        ),
      payment: (status, extra = '') =>
        pick(
          `a ${status} payment`,
          `SELECT id FROM payments WHERE organization_id = :org AND status = '${status}'${extra}`,
        ),
      pair: () => this.pair(p),
      ungraded: () => this.ungraded(p),
      inserted: (kind) => this.inserted(p, kind),
    });
  }

  /** A record of the sandbox the change can start from, chosen at random; 409 when none is. */
  private async pick(p: Principal, what: string, select: string): Promise<string> {
    const [count] = await this.sql.select<{ n: number }>(
      `SELECT COUNT(*) AS n FROM (${select}) c`,
      { org: p.organizationId },
    );
    const n = Number(count!.n);
    if (n === 0) throw nothingToChange(what);
    const [row] = await this.sql.select<{ id: string }>(
      `${select} ORDER BY id LIMIT 1 OFFSET ${Math.floor(Math.random() * n)}`,
      { org: p.organizationId },
    );
    return row!.id;
  }

  /**
   * An active student and an active course with a free seat (its live enrollments under its
   * capacity) and no live enrollment of that student.
   */
  private async pair(p: Principal): Promise<{ student: string; course: string }> {
    const [row] = await this.sql.select<{ student: string; course: string }>(
      `SELECT s.id AS student, c.id AS course FROM students s JOIN courses c
         ON c.organization_id = s.organization_id AND c.status = 'active' AND (
           c.capacity IS NULL OR c.capacity > (SELECT COUNT(*) FROM enrollments l
             WHERE l.course_id = c.id AND l.status IN ('pending', 'active')))
       WHERE s.organization_id = :org AND s.status = 'active' AND NOT EXISTS (
         SELECT 1 FROM enrollments e WHERE e.student_id = s.id AND e.course_id = c.id
           AND e.status IN ('pending', 'active'))
       ORDER BY s.id DESC LIMIT 1`,
      { org: p.organizationId },
    );
    if (!row)
      throw nothingToChange('an active student not enrolled in an active course with a seat');
    return row;
  }

  /** An exam and a student enrolled in its course (past pending) with no result in it yet. */
  private async ungraded(p: Principal): Promise<{ exam: string; student: string }> {
    const [row] = await this.sql.select<{ exam: string; student: string }>(
      `SELECT x.id AS exam, e.student_id AS student FROM exams x JOIN enrollments e
         ON e.course_id = x.course_id AND e.status IN ('active', 'completed')
       WHERE x.organization_id = :org AND NOT EXISTS (
         SELECT 1 FROM exam_results r WHERE r.exam_id = x.id AND r.student_id = e.student_id)
       ORDER BY x.id DESC LIMIT 1`,
      { org: p.organizationId },
    );
    if (!row) throw nothingToChange('an enrolled student without a result in an exam');
    return row;
  }

  /**
   * A record nothing refers to, written without an event (as the seed writes), for a `*.deleted`
   * trigger to delete through the service: so the deletion is the only event sent.
   */
  private async inserted(p: Principal, kind: 'student' | 'course' | 'exam'): Promise<string> {
    const now = this.clock.nowMs();
    const seed = randomBytes(3).readUIntBE(0, 3);
    const tag = randomBytes(4).toString('hex').toUpperCase();
    const examCourse =
      kind === 'exam'
        ? await this.pick(p, 'a course', `SELECT id FROM courses WHERE organization_id = :org`)
        : null;
    return this.transactions.run(async (manager) => {
      if (kind === 'student') {
        const [row] = demoStudents(p.organizationId, 1, now, [], seed);
        row!.studentNumber = `TRG-${tag}`;
        row!.externalId = null;
        await insertRows(manager, Student, [row!]);
        return row!.id;
      }
      const school = demoSchool(p.organizationId, [], { now, seed });
      const course = school.courses[0]!;
      if (kind === 'course') {
        Object.assign(course, { code: `TRG-${tag}`, externalId: null });
        await insertRows(manager, Course, [course]);
        return course.id;
      }
      const exam = {
        ...school.exams[0]!,
        courseId: examCourse!,
        title: `Triggered exam ${tag}`,
        externalId: null,
      };
      await insertRows(manager, Exam, [exam]);
      return exam.id;
    });
  }
}

/** The overrides merged into a body, checked as the route checks it (400 naming the field). */
function body<S extends z.ZodTypeAny>(schema: S, value: Record<string, unknown>): z.output<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data as z.output<S>;
  const errors = zodErrors('body.overrides', parsed.error);
  throw new ProblemException(
    'validation_error',
    `The overrides do not make a valid change: ${errors.map((e) => `${e.path} ${e.message}`).join('; ')}`,
    { errors },
  );
}

function nothingToChange(what: string): ProblemException {
  return new ProblemException(
    'conflict',
    `The sandbox has no ${what} to make this change to; reset it (POST /v1/sandboxes/{id}/reset)`,
  );
}
