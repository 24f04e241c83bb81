import type { EnrollmentStatus, IdKind } from '@platform/contract';
import type { Course } from '../courses/course.entity';
import type { Enrollment } from '../enrollments/enrollment.entity';
import { applyTransition, hasFreeSeat, holdsSeat } from '../enrollments/enrollment-rules';
import { canBeGraded, publishResult, scoreRefusal } from '../exams/exam-result-rules';
import type { ExamResult } from '../exams/exam-result.entity';
import type { Exam } from '../exams/exam.entity';
import type { Payment } from '../payments/payment.entity';
import type { Student } from '../students/student.entity';
import {
  COURSE_LOADS,
  type CourseInfo,
  COURSES,
  type CourseSpec,
  CURRENT_STATUSES,
  DAY,
  ENDED_STATUSES,
  ENROLLMENT_CLOSES,
  ENROLLMENT_NOTES,
  ENROLLMENT_OPENS,
  HOUR,
  TERMS,
  UPCOMING_STATUSES,
} from './demo-school-data';
import { type SchoolTools, SchoolPayments } from './demo-school-payments';
import { demoId } from './ids';
import { Draw, prng } from './random';
import {
  DEMO_COURSE_IDS,
  DEMO_ENROLLMENT_IDS,
  DEMO_EXAM_IDS,
  DEMO_EXAM_RESULT_IDS,
  DEMO_PAYMENT_IDS,
} from './seed.constants';

export interface DemoSchool {
  courses: Course[];
  exams: Exam[];
  enrollments: Enrollment[];
  payments: Payment[];
  examResults: ExamResult[];
}

export interface DemoSchoolOptions {
  /** The moment the school is seeded; every timestamp is at or before it. */
  now?: number;
  /** Give the documented records their fixed ids (the demo organization only). */
  fixedIds?: boolean;
  /** Another seed, another school (a sandbox's); the demo organization's is 0. */
  seed?: number;
}

/**
 * A school year around `students`: the course catalog with its exams, enrollments, tuition
 * payments and exam results, all consistent with the API's rules because it goes through them
 * (the modules' rule functions: seats and one live enrollment per student and course, the
 * enrollment, payment and result state machines, refunds within the amount, results only for
 * students enrolled past `pending`, scores within the exam's max_score). Deterministic for the same
 * students and `now` (except the generated ids). The first student has a fixed story that the
 * documented ids (seed.constants.ts) name.
 */
export function demoSchool(
  organizationId: string,
  students: readonly Student[],
  options: DemoSchoolOptions = {},
): DemoSchool {
  return new SchoolBuilder(
    organizationId,
    students,
    // The seed passes the server's Clock; the default serves callers without a server (specs).
    options.now ?? Date.now(),
    options.fixedIds ?? false,
    options.seed ?? 0,
  ).build();
}

class SchoolBuilder implements SchoolTools {
  readonly draw: Draw;
  /** Midnight UTC of the day `now` falls on. */
  private readonly today: number;
  private readonly courses: CourseInfo[] = [];
  private readonly enrollments: Enrollment[] = [];
  private readonly results: ExamResult[] = [];
  /** Draws from this builder's generator, interleaved with the enrollments' draws. */
  private readonly pay = new SchoolPayments(this);
  /** Live (pending or active) enrollments per course, and which student-course pairs hold one. */
  private readonly seatsTaken = new Map<string, number>();
  private readonly livePairs = new Set<string>();
  private readonly ability = new Map<string, number>();
  /** The documented exams (keys of DEMO_EXAM_IDS and the like), by exam id. */
  private readonly examKeys = new Map<string, string>();

  constructor(
    readonly organizationId: string,
    private readonly students: readonly Student[],
    readonly now: number,
    private readonly fixedIds: boolean,
    seed: number,
  ) {
    this.draw = new Draw(prng(20261123 + 2 * seed));
    this.today = Math.floor(now / DAY) * DAY;
  }

  build(): DemoSchool {
    for (const spec of COURSES) this.courses.push(this.course(spec));
    const [storyStudent, ...others] = this.students;
    if (storyStudent) this.story(storyStudent);
    for (const student of others) this.enrollStudent(student);
    for (const student of this.students) this.pay.otherFees(student);
    for (const course of this.courses) for (const exam of course.exams) this.grade(course, exam);
    // A stable sort: records created at the same moment keep the order they were made in.
    const byCreation = <T extends { createdAt: Date }>(rows: T[]) =>
      rows.sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime());
    return {
      courses: byCreation(this.courses.map((c) => c.row)),
      exams: byCreation(this.courses.flatMap((c) => c.exams)),
      enrollments: byCreation(this.enrollments),
      payments: byCreation(this.pay.payments),
      examResults: byCreation(this.results),
    };
  }

  // --- the catalog ---

  private course(spec: CourseSpec): CourseInfo {
    const term = TERMS[spec.term];
    const start = this.today + term.start * DAY;
    const end = this.today + term.end * DAY;
    const createdAt = this.at(start - 90 * DAY + this.draw.int(0, 20) * DAY + 10 * HOUR);
    const updatedAt =
      spec.status === 'archived'
        ? this.at(end + 30 * DAY + 9 * HOUR)
        : this.after(createdAt.getTime(), 0, 20 * DAY);
    const row: Course = {
      id: this.id('course', createdAt, spec.key && DEMO_COURSE_IDS[spec.key]),
      organizationId: this.organizationId,
      externalId: null,
      code: spec.code,
      title: spec.title,
      description: spec.description,
      status: spec.status,
      startDate: isoDate(start),
      endDate: isoDate(end),
      capacity: spec.capacity
        ? Math.max(spec.capacity.min, Math.ceil(this.students.length * spec.capacity.perStudent))
        : null,
      createdAt,
      updatedAt,
    };
    const info: CourseInfo = {
      spec,
      row,
      start,
      end,
      opens: start - ENROLLMENT_OPENS,
      closes: Math.min(this.now, start + ENROLLMENT_CLOSES),
      exams: [],
      enrollments: [],
    };
    const [midterm, final] = spec.examTitles ?? ['Midterm exam', 'Final exam'];
    info.exams.push(
      this.exam(info, midterm, start + spec.midtermDay * DAY, spec.key && `${spec.key}Midterm`),
      this.exam(info, final, end - 5 * DAY, spec.key && `${spec.key}Final`),
    );
    return info;
  }

  private exam(course: CourseInfo, title: string, heldOn: number, key?: string): Exam {
    const createdAt = this.after(course.row.createdAt.getTime(), 7 * DAY, 30 * DAY);
    const fixedIds: Record<string, string> = DEMO_EXAM_IDS;
    const exam: Exam = {
      id: this.id('exam', createdAt, key && fixedIds[key]),
      organizationId: this.organizationId,
      externalId: null,
      courseId: course.row.id,
      title: `${course.spec.code} ${title}`,
      maxScore: 100,
      heldOn: isoDate(heldOn),
      createdAt,
      updatedAt: createdAt,
    };
    if (key) this.examKeys.set(exam.id, key);
    return exam;
  }

  // --- enrollments and their payments ---

  /** The first student's records, which the fixed ids name: the same every time. */
  private story(student: Student): void {
    const math = this.courseByKey('math101');
    const latin = this.courseByKey('lat101');
    const cs = this.courseByKey('cs150');
    const algebra = this.enroll(student, math, 'active', math.opens + 20 * DAY + 9 * HOUR, {
      id: DEMO_ENROLLMENT_IDS.math101Active,
      notes: null,
    });
    const latinI = this.enroll(student, latin, 'completed', latin.opens + 30 * DAY + 14 * HOUR, {
      id: DEMO_ENROLLMENT_IDS.lat101Completed,
      notes: 'Scholarship: 20% of the tuition refunded',
    });
    const programming = this.enroll(student, cs, 'pending', this.now - 3 * DAY, {
      id: DEMO_ENROLLMENT_IDS.cs150Pending,
      notes: null,
    });
    if (algebra) {
      this.pay.tuition(algebra, math, { status: 'succeeded' }, DEMO_PAYMENT_IDS.math101Succeeded);
    }
    if (latinI) {
      const refund = {
        amount: Math.round(latin.spec.fee / 5),
        notBefore: latinI.createdAt.getTime() + 40 * DAY,
      };
      this.pay.tuition(
        latinI,
        latin,
        { status: 'succeeded', refund },
        DEMO_PAYMENT_IDS.lat101PartlyRefunded,
      );
    }
    if (programming) {
      this.pay.tuition(programming, cs, { status: 'pending' }, DEMO_PAYMENT_IDS.cs150Pending);
    }
  }

  /** A few courses, picked by demand among those open while the student was at the school. */
  private enrollStudent(student: Student): void {
    const joined = student.createdAt.getTime() + HOUR;
    // Graduates only took courses that have ended.
    let open = this.courses.filter(
      (c) =>
        Math.max(joined, c.opens) < c.closes &&
        (student.status !== 'graduated' || this.hasEnded(c)),
    );
    const load = Number(this.draw.weighted(COURSE_LOADS));
    for (let n = 0; n < load && open.length > 0; n++) {
      const course = this.pickByDemand(open);
      open = open.filter((c) => c !== course);
      const from = Math.max(joined, course.opens);
      const createdAt = from + this.draw.random() * Math.min(30 * DAY, course.closes - from);
      const status = this.enrollmentStatus(student, course);
      const enrollment = this.enroll(student, course, status, createdAt);
      if (!enrollment) continue;
      this.pay.payForEnrollment(course, enrollment);
      const ended = enrollment.droppedAt ?? enrollment.cancelledAt;
      // Some students come back to a course they dropped or cancelled: the earlier enrollment is
      // no longer live, so a new one is allowed.
      if (ended && !this.hasEnded(course) && student.status === 'active') {
        if (this.draw.chance(0.2)) {
          const again = this.enroll(
            student,
            course,
            course.spec.term === 'current' ? 'active' : 'pending',
            ended.getTime() + this.draw.int(1, 20) * DAY,
          );
          if (again) this.pay.payForEnrollment(course, again);
        }
      }
    }
  }

  private enrollmentStatus(student: Student, course: CourseInfo): EnrollmentStatus {
    const status = this.hasEnded(course)
      ? this.draw.weighted(ENDED_STATUSES)
      : course.spec.term === 'current'
        ? this.draw.weighted(CURRENT_STATUSES)
        : this.draw.weighted(UPCOMING_STATUSES);
    // Students who left the school hold no seats.
    if (student.status !== 'active') {
      if (status === 'active') return 'dropped';
      if (status === 'pending') return 'cancelled';
    }
    return status;
  }

  /**
   * An enrollment created at `createdAtMs` and moved through the transitions that lead to
   * `status`, or undefined when the rules refuse it: a live one needs a free seat and no other
   * live enrollment of the student there.
   */
  private enroll(
    student: Student,
    course: CourseInfo,
    status: EnrollmentStatus,
    createdAtMs: number,
    fixed: { id?: string; notes?: string | null } = {},
  ): Enrollment | undefined {
    const createdAt = this.at(Math.max(createdAtMs, student.createdAt.getTime() + HOUR));
    const pair = `${student.id}:${course.row.id}`;
    if (holdsSeat(status)) {
      const taken = this.seatsTaken.get(course.row.id) ?? 0;
      if (this.livePairs.has(pair) || !hasFreeSeat(course.row, taken)) return undefined;
      this.seatsTaken.set(course.row.id, taken + 1);
      this.livePairs.add(pair);
    }
    const created = createdAt.getTime();
    const wasActive =
      status === 'active' ||
      status === 'completed' ||
      (status === 'dropped' && this.draw.chance(0.7));
    const activatedAt = wasActive ? this.after(created, HOUR, 3 * DAY) : null;
    const completedAt =
      status === 'completed' ? this.after(Math.max(course.end, created), DAY, 5 * DAY) : null;
    const droppedAt =
      status === 'dropped' ? this.after((activatedAt ?? createdAt).getTime(), DAY, 45 * DAY) : null;
    const cancelledAt = status === 'cancelled' ? this.after(created, HOUR, 10 * DAY) : null;
    const enrollment: Enrollment = {
      id: this.id('enrollment', createdAt, fixed.id),
      organizationId: this.organizationId,
      externalId: null,
      studentId: student.id,
      courseId: course.row.id,
      status: 'pending',
      notes:
        fixed.notes !== undefined
          ? fixed.notes
          : this.draw.chance(0.05)
            ? this.draw.pick(ENROLLMENT_NOTES)
            : null,
      activatedAt: null,
      completedAt: null,
      droppedAt: null,
      cancelledAt: null,
      createdAt,
      updatedAt: createdAt,
    };
    if (activatedAt) applyTransition(enrollment, 'activate', activatedAt);
    if (completedAt) applyTransition(enrollment, 'complete', completedAt);
    if (droppedAt) applyTransition(enrollment, 'drop', droppedAt);
    if (cancelledAt) applyTransition(enrollment, 'cancel', cancelledAt);
    this.enrollments.push(enrollment);
    course.enrollments.push(enrollment);
    return enrollment;
  }

  // --- exam results ---

  /**
   * Results of a held exam for the students whose enrollment in its course was active by then and
   * still is, or completed. Published a week or two after the exam; recent ones are drafts.
   */
  private grade(course: CourseInfo, exam: Exam): void {
    const heldOn = Date.parse(`${exam.heldOn}T00:00:00Z`);
    if (heldOn > this.today) return;
    const story = this.storyResults(exam);
    const graded = new Set<string>();
    for (const enrollment of course.enrollments) {
      if (!canBeGraded(enrollment.status)) continue;
      if (!enrollment.activatedAt || enrollment.activatedAt.getTime() >= heldOn + DAY) continue;
      if (graded.has(enrollment.studentId)) continue;
      const fixed = story.get(enrollment.studentId);
      // A few students miss the exam.
      if (!fixed && this.draw.chance(0.06)) continue;
      graded.add(enrollment.studentId);
      const createdAt = this.after(heldOn + 12 * HOUR, DAY, 5 * DAY);
      const publishOn = heldOn + 7 * DAY + this.draw.random() * 7 * DAY;
      const published = fixed ? fixed.published : publishOn < this.now;
      const publishedAt = published ? this.at(Math.max(publishOn, createdAt.getTime())) : null;
      const score = this.score(enrollment.studentId, exam.maxScore);
      // The scores are drawn within max_score; a refusal here is a bug in this builder.
      const refused = scoreRefusal(score, exam);
      if (refused) throw refused;
      const result: ExamResult = {
        id: this.id('exam_result', createdAt, fixed?.id),
        organizationId: this.organizationId,
        externalId: null,
        examId: exam.id,
        studentId: enrollment.studentId,
        score,
        grade: letterGrade(score / exam.maxScore),
        status: 'draft',
        publishedAt: null,
        createdAt,
        updatedAt: createdAt,
      };
      if (publishedAt) publishResult(result, publishedAt);
      this.results.push(result);
    }
  }

  /** The first student's documented results, by student id. */
  private storyResults(exam: Exam): Map<string, { id?: string; published: boolean }> {
    const student = this.students[0];
    const story = new Map<string, { id?: string; published: boolean }>();
    const key = this.examKeys.get(exam.id);
    if (!student) return story;
    if (key === 'math101Midterm')
      story.set(student.id, { id: DEMO_EXAM_RESULT_IDS.math101MidtermDraft, published: false });
    if (key === 'lat101Final')
      story.set(student.id, { id: DEMO_EXAM_RESULT_IDS.lat101FinalPublished, published: true });
    return story;
  }

  /** Around the student's usual level, in half points. */
  private score(studentId: string, maxScore: number): number {
    let ability = this.ability.get(studentId);
    if (ability === undefined) {
      ability = this.draw.normal(0.72, 0.12);
      this.ability.set(studentId, ability);
    }
    const share = Math.min(1, Math.max(0.05, this.draw.normal(ability, 0.08)));
    return Math.round(share * maxScore * 2) / 2;
  }

  // --- helpers ---

  private hasEnded(course: CourseInfo): boolean {
    return course.end < this.today;
  }

  private courseByKey(key: keyof typeof DEMO_COURSE_IDS): CourseInfo {
    return this.courses.find((c) => c.spec.key === key)!;
  }

  private pickByDemand(courses: readonly CourseInfo[]): CourseInfo {
    let roll = this.draw.random() * courses.reduce((sum, c) => sum + c.spec.demand, 0);
    for (const course of courses) {
      roll -= course.spec.demand;
      if (roll < 0) return course;
    }
    return courses[courses.length - 1]!;
  }

  /** A public id whose time part is the record's creation time (fixed ids only when asked). */
  id(kind: IdKind, createdAt: Date, fixed?: string): string {
    return (this.fixedIds && fixed) || demoId(kind, createdAt.getTime());
  }

  /** A moment, but never after `now`. */
  at(ms: number): Date {
    return new Date(Math.floor(Math.min(ms, this.now)));
  }

  /** A random moment between `min` and `max` after `ms`, but never after `now`. */
  after(ms: number, min: number, max: number): Date {
    return this.at(ms + min + this.draw.random() * (max - min));
  }
}

function isoDate(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** A–F with + and −, from the share of the maximum score. */
export function letterGrade(share: number): string {
  const percent = Math.round(share * 100);
  if (percent < 60) return 'F';
  const letter = percent >= 90 ? 'A' : percent >= 80 ? 'B' : percent >= 70 ? 'C' : 'D';
  const within = percent >= 90 ? percent - 90 : percent % 10;
  return `${letter}${within >= 7 && letter !== 'A' ? '+' : within < 3 ? '-' : ''}`;
}
