import { type IdKind, idPattern, LIVE_ENROLLMENT_STATUSES } from '@platform/contract';
import { type DemoSchool, demoSchool, letterGrade } from './demo-school';
import { demoStudents } from './demo-students';
import {
  DEMO_COURSE_IDS,
  DEMO_ENROLLMENT_IDS,
  DEMO_EXAM_IDS,
  DEMO_EXAM_RESULT_IDS,
  DEMO_PAYMENT_IDS,
  DEMO_STUDENT_IDS,
} from './seed.constants';

const ORG = 'org_01JC0TESTRG000000000000000';
const FIXED_IDS = new Set<string>([
  ...DEMO_STUDENT_IDS,
  ...Object.values(DEMO_COURSE_IDS),
  ...Object.values(DEMO_ENROLLMENT_IDS),
  ...Object.values(DEMO_PAYMENT_IDS),
  ...Object.values(DEMO_EXAM_IDS),
  ...Object.values(DEMO_EXAM_RESULT_IDS),
]);
const NOW = Date.parse('2026-11-22T10:00:00.000Z');

function school(count: number, fixedIds = true) {
  const students = demoStudents(ORG, count, NOW, fixedIds ? DEMO_STUDENT_IDS : []);
  return { students, ...demoSchool(ORG, students, { now: NOW, fixedIds }) };
}

/** Notes `row` as breaking the rule `what` unless it `holds`. */
type Rule = (holds: boolean, what: string, row: { id: string }) => void;

/** The payments' rules: a known student, amounts and refunds, a timestamp for each status. */
function paymentRules(
  s: DemoSchool,
  studentIds: Set<string>,
  enrollments: Map<string, DemoSchool['enrollments'][number]>,
  rule: Rule,
) {
  for (const p of s.payments) {
    rule(studentIds.has(p.studentId), 'a known student', p);
    if (p.enrollmentId) {
      rule(enrollments.get(p.enrollmentId)?.studentId === p.studentId, "the student's", p);
    }
    rule(Number.isInteger(p.amount) && p.amount > 0, 'a positive whole amount', p);
    rule(p.currency === 'EUR', 'in EUR', p);
    rule(p.amountRefunded >= 0 && p.amountRefunded <= p.amount, 'refunded within amount', p);
    rule(p.amountRefunded > 0 === (p.status === 'refunded'), 'refunded amount iff refunded', p);
    rule(!!p.refundedAt === (p.status === 'refunded'), 'refunded_at iff refunded', p);
    rule(
      !!p.succeededAt === (p.status === 'succeeded' || p.status === 'refunded'),
      'succeeded_at iff it succeeded',
      p,
    );
    rule(!!p.failedAt === (p.status === 'failed'), 'failed_at iff failed', p);
    rule(!!p.failureReason === (p.status === 'failed'), 'failure_reason iff failed', p);
  }
}

/** The exam results' rules: score and grade, one per student and exam, an attending student. */
function examResultRules(
  s: DemoSchool,
  exams: Map<string, DemoSchool['exams'][number]>,
  rule: Rule,
) {
  const today = new Date(NOW).toISOString().slice(0, 10);
  const graded = new Set<string>();
  // Active or completed enrollments by student and course, for the rule on results.
  const attending = new Set(
    s.enrollments
      .filter((e) => e.status === 'active' || e.status === 'completed')
      .map((e) => `${e.studentId} ${e.courseId}`),
  );
  for (const r of s.examResults) {
    const exam = exams.get(r.examId)!;
    rule(r.score >= 0 && r.score <= exam.maxScore, 'score within 0..max_score', r);
    rule(exam.heldOn! <= today, 'exam held by today', r);
    rule(r.grade === letterGrade(r.score / exam.maxScore), 'grade from the score', r);
    rule(!!r.publishedAt === (r.status === 'published'), 'published_at iff published', r);
    rule(!graded.has(`${r.examId} ${r.studentId}`), 'one result per student and exam', r);
    graded.add(`${r.examId} ${r.studentId}`);
    rule(attending.has(`${r.studentId} ${exam.courseId}`), 'an attending student', r);
  }
}

/**
 * Every rule the API enforces on writes, and a few more that make the data believable. Broken
 * rules are collected and compared with none at the end: one `expect` per row and rule made the
 * 2000-student school take seconds, and the list names every row that breaks a rule.
 */
function expectConsistent({ students, ...s }: DemoSchool & { students: { id: string }[] }) {
  const broken: string[] = [];
  const rule: Rule = (holds, what, row) => {
    if (!holds) broken.push(`${row.id}: ${what}`);
  };
  const studentIds = new Set(students.map((st) => st.id));
  const courses = new Map(s.courses.map((c) => [c.id, c]));
  const exams = new Map(s.exams.map((e) => [e.id, e]));
  const enrollments = new Map(s.enrollments.map((e) => [e.id, e]));
  const all: [IdKind, { id: string; createdAt: Date; updatedAt: Date }[]][] = [
    ['course', s.courses],
    ['exam', s.exams],
    ['enrollment', s.enrollments],
    ['payment', s.payments],
    ['exam_result', s.examResults],
  ];
  for (const [kind, rows] of all) {
    expect(new Set(rows.map((r) => r.id)).size).toBe(rows.length);
    const pattern = idPattern(kind);
    for (const row of rows) {
      rule(pattern.test(row.id), `an id of a ${kind}`, row);
      rule(row.createdAt.getTime() <= row.updatedAt.getTime(), 'created <= updated', row);
      rule(row.updatedAt.getTime() <= NOW, 'updated <= now', row);
    }
  }

  expect(s.courses.filter((c) => c.status === 'archived')).toHaveLength(1);
  for (const course of s.courses) {
    rule(/^[A-Z]+-\d{3}$/.test(course.code), 'code like ABC-123', course);
    rule(course.endDate! >= course.startDate!, 'ends after it starts', course);
    rule(course.capacity === null || course.capacity >= 1, 'capacity null or >= 1', course);
    rule(s.exams.filter((e) => e.courseId === course.id).length === 2, 'two exams', course);
  }

  const live = new Map<string, number>();
  const livePairs = new Set<string>();
  for (const e of s.enrollments) {
    rule(studentIds.has(e.studentId), 'a known student', e);
    rule(courses.has(e.courseId), 'a known course', e);
    rule(!!e.completedAt === (e.status === 'completed'), 'completed_at iff completed', e);
    rule(!!e.droppedAt === (e.status === 'dropped'), 'dropped_at iff dropped', e);
    rule(!!e.cancelledAt === (e.status === 'cancelled'), 'cancelled_at iff cancelled', e);
    if (e.status === 'active' || e.status === 'completed') {
      rule(e.activatedAt !== null, 'activated_at once active', e);
    }
    if (e.status === 'pending' || e.status === 'cancelled') {
      rule(e.activatedAt === null, 'no activated_at before active', e);
    }
    if ((LIVE_ENROLLMENT_STATUSES as readonly string[]).includes(e.status)) {
      const pair = `${e.studentId} ${e.courseId}`;
      rule(!livePairs.has(pair), 'one live enrollment per student and course', e);
      livePairs.add(pair);
      live.set(e.courseId, (live.get(e.courseId) ?? 0) + 1);
    }
  }
  for (const [courseId, seats] of live) {
    const course = courses.get(courseId)!;
    rule(course.status !== 'archived', 'no live enrollment in an archived course', course);
    rule(course.capacity === null || seats <= course.capacity, 'within capacity', course);
  }

  paymentRules(s, studentIds, enrollments, rule);

  examResultRules(s, exams, rule);
  expect(broken).toEqual([]);
}

/** The same school with its generated ids replaced by their order of appearance. */
function withoutGeneratedIds(value: DemoSchool): string {
  const names = new Map<string, string>();
  return JSON.stringify(value, (_key, v: unknown) => {
    if (typeof v === 'string' && /^[a-z]{3}_[0-9A-Z]{26}$/.test(v) && !FIXED_IDS.has(v)) {
      if (!names.has(v)) names.set(v, `#${names.size}`);
      return names.get(v);
    }
    return v;
  });
}

describe('demoSchool', () => {
  it.each([1, 2, 3, 30, 2000])('is consistent with the API rules for %i students', (count) => {
    expectConsistent(school(count));
  });

  it('scales with the students: about 1.5 enrollments each, every resource present', () => {
    const s = school(2000);
    expect(s.courses).toHaveLength(8);
    expect(s.exams).toHaveLength(16);
    expect(s.enrollments.length / 2000).toBeGreaterThan(1.2);
    expect(s.enrollments.length / 2000).toBeLessThan(1.8);
    expect(s.payments.length).toBeGreaterThan(s.enrollments.length * 0.8);
    expect(s.examResults.length).toBeGreaterThan(2000 * 0.5);
    const share = <T>(rows: T[], test: (row: T) => boolean) =>
      rows.filter(test).length / rows.length;
    expect(share(s.courses, (c) => c.status === 'active')).toBeGreaterThan(0.8);
    expect(share(s.enrollments, (e) => e.status === 'active')).toBeGreaterThan(0.45);
    for (const status of ['pending', 'completed', 'dropped', 'cancelled'] as const) {
      expect(share(s.enrollments, (e) => e.status === status)).toBeGreaterThan(0.03);
    }
    expect(share(s.payments, (p) => p.status === 'succeeded')).toBeGreaterThan(0.6);
    for (const status of ['pending', 'failed', 'refunded'] as const) {
      expect(share(s.payments, (p) => p.status === status)).toBeGreaterThan(0.01);
    }
    expect(s.payments.some((p) => p.status === 'refunded' && p.amountRefunded < p.amount)).toBe(
      true,
    );
    expect(s.payments.some((p) => p.status === 'refunded' && p.amountRefunded === p.amount)).toBe(
      true,
    );
    expect(share(s.examResults, (r) => r.status === 'published')).toBeGreaterThan(0.6);
    expect(s.examResults.some((r) => r.status === 'draft')).toBe(true);
  });

  it('is the same school every time for the same students and moment', () => {
    const a = school(300);
    const b = school(300);
    expect(withoutGeneratedIds(b)).toBe(withoutGeneratedIds(a));
  });

  it('gives the documented records their fixed ids, in the states the docs describe', () => {
    const s = school(3);
    const find = <T extends { id: string }>(rows: T[], id: string) => {
      const row = rows.find((r) => r.id === id);
      expect(row).toBeDefined();
      return row!;
    };
    expect(find(s.courses, DEMO_COURSE_IDS.math101)).toMatchObject({ code: 'MATH-101' });
    expect(find(s.courses, DEMO_COURSE_IDS.lat101)).toMatchObject({ status: 'archived' });
    expect(find(s.courses, DEMO_COURSE_IDS.cs150)).toMatchObject({ code: 'CS-150' });
    expect(find(s.exams, DEMO_EXAM_IDS.math101Midterm).courseId).toBe(DEMO_COURSE_IDS.math101);
    expect(find(s.exams, DEMO_EXAM_IDS.math101Final).courseId).toBe(DEMO_COURSE_IDS.math101);
    expect(find(s.exams, DEMO_EXAM_IDS.lat101Final).courseId).toBe(DEMO_COURSE_IDS.lat101);
    const student = DEMO_STUDENT_IDS[0];
    expect(find(s.enrollments, DEMO_ENROLLMENT_IDS.math101Active)).toMatchObject({
      studentId: student,
      courseId: DEMO_COURSE_IDS.math101,
      status: 'active',
    });
    expect(find(s.enrollments, DEMO_ENROLLMENT_IDS.lat101Completed)).toMatchObject({
      courseId: DEMO_COURSE_IDS.lat101,
      status: 'completed',
    });
    expect(find(s.enrollments, DEMO_ENROLLMENT_IDS.cs150Pending)).toMatchObject({
      courseId: DEMO_COURSE_IDS.cs150,
      status: 'pending',
    });
    expect(find(s.payments, DEMO_PAYMENT_IDS.math101Succeeded)).toMatchObject({
      enrollmentId: DEMO_ENROLLMENT_IDS.math101Active,
      status: 'succeeded',
      amountRefunded: 0,
    });
    const refunded = find(s.payments, DEMO_PAYMENT_IDS.lat101PartlyRefunded);
    expect(refunded).toMatchObject({ status: 'refunded', amountRefunded: refunded.amount / 5 });
    expect(find(s.payments, DEMO_PAYMENT_IDS.cs150Pending)).toMatchObject({ status: 'pending' });
    expect(find(s.examResults, DEMO_EXAM_RESULT_IDS.math101MidtermDraft)).toMatchObject({
      examId: DEMO_EXAM_IDS.math101Midterm,
      studentId: student,
      status: 'draft',
    });
    expect(find(s.examResults, DEMO_EXAM_RESULT_IDS.lat101FinalPublished)).toMatchObject({
      examId: DEMO_EXAM_IDS.lat101Final,
      studentId: student,
      status: 'published',
    });
  });

  it('uses no fixed ids unless asked, so any organization can have a demo school', () => {
    const s = school(30, false);
    const ids = [s.courses, s.exams, s.enrollments, s.payments, s.examResults].flatMap((rows) =>
      rows.map((r: { id: string }) => r.id),
    );
    expect(ids.filter((id) => FIXED_IDS.has(id))).toEqual([]);
  });

  it('grades on an A–F scale with + and −', () => {
    expect([0.95, 0.9, 0.89, 0.84, 0.8, 0.62, 0.59].map(letterGrade)).toEqual([
      'A',
      'A-',
      'B+',
      'B',
      'B-',
      'D-',
      'F',
    ]);
  });
});
