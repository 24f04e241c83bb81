import type { CourseStatus } from '@platform/contract';
import type { Course } from '../courses/course.entity';
import type { Enrollment } from '../enrollments/enrollment.entity';
import type { Exam } from '../exams/exam.entity';
import type { DEMO_COURSE_IDS } from './seed.constants';

// The demo school's fixed catalogue and the odds it is drawn with (demo-school.ts draws from them).

export const HOUR = 3_600_000;
export const DAY = 24 * HOUR;

/** Last school year, this one (a whole-year course or its first-half module), the next one. */
export type Term = 'past' | 'current' | 'firstHalf' | 'upcoming';

/** When each term starts and ends, in days from today. */
export const TERMS: Record<Term, { start: number; end: number }> = {
  past: { start: -330, end: -150 },
  current: { start: -100, end: 80 },
  firstHalf: { start: -100, end: -20 },
  upcoming: { start: 30, end: 200 },
};

/** Enrollment opens this long before a term starts and closes this long after. */
export const ENROLLMENT_OPENS = 45 * DAY;
export const ENROLLMENT_CLOSES = 45 * DAY;

export interface CourseSpec {
  /** Names the course in DEMO_COURSE_IDS (and in the first demo student's story). */
  key?: keyof typeof DEMO_COURSE_IDS;
  code: string;
  title: string;
  description: string;
  status: CourseStatus;
  term: Term;
  /** Seats: `min`, or `perStudent` of the school's students when that is more. */
  capacity?: { min: number; perStudent: number };
  /** Tuition in euro cents. */
  fee: number;
  /** How popular the course is, relative to the others. */
  demand: number;
  /** Day of the term the midterm is held on (the final is held five days before the end). */
  midtermDay: number;
  examTitles?: readonly [string, string];
}

export const COURSES: readonly CourseSpec[] = [
  {
    key: 'math101',
    code: 'MATH-101',
    title: 'Algebra I',
    description:
      'Linear equations and inequalities, functions and their graphs, systems of equations and a first look at quadratics.',
    status: 'active',
    term: 'current',
    capacity: { min: 30, perStudent: 0.25 },
    fee: 42_000,
    demand: 5,
    midtermDay: 92,
  },
  {
    code: 'ENG-101',
    title: 'English Composition',
    description:
      'Writing clear, well-argued essays: thesis, structure, use of evidence, revision and citation.',
    status: 'active',
    term: 'current',
    fee: 38_000,
    demand: 5,
    midtermDay: 60,
  },
  {
    code: 'BIO-110',
    title: 'Introduction to Biology',
    description:
      'Cells, genetics, evolution and ecosystems, with weekly laboratory sessions and a field trip.',
    status: 'active',
    term: 'current',
    capacity: { min: 28, perStudent: 0.22 },
    fee: 45_000,
    demand: 4,
    midtermDay: 75,
  },
  {
    code: 'HIST-210',
    title: 'Modern European History',
    description:
      'From the French Revolution to the European Union: revolutions, empires, two world wars and integration. A first-half module; the second half is HIST-211.',
    status: 'active',
    term: 'firstHalf',
    fee: 36_000,
    demand: 3,
    midtermDay: 40,
  },
  {
    code: 'CHEM-120',
    title: 'General Chemistry with Lab',
    description:
      'Atomic structure, bonding, stoichiometry and reactions. Lab places are limited by the number of benches.',
    status: 'active',
    term: 'current',
    capacity: { min: 16, perStudent: 0.08 },
    fee: 52_000,
    demand: 3,
    midtermDay: 85,
  },
  {
    key: 'lat101',
    code: 'LAT-101',
    title: 'Latin I',
    description:
      'Grammar, vocabulary and short readings from Roman authors. No longer offered: replaced by the modern languages programme.',
    status: 'archived',
    term: 'past',
    capacity: { min: 20, perStudent: 0.08 },
    fee: 35_000,
    demand: 2,
    midtermDay: 90,
  },
  {
    key: 'cs150',
    code: 'CS-150',
    title: 'Programming Fundamentals',
    description:
      'Variables, control flow, functions and data structures in Python, ending with a small project of your own.',
    status: 'active',
    term: 'upcoming',
    capacity: { min: 24, perStudent: 0.2 },
    fee: 48_000,
    demand: 4,
    midtermDay: 80,
  },
  {
    code: 'ART-105',
    title: 'Studio Art: Drawing and Painting',
    description:
      'Observational drawing, colour theory and painting in acrylics; materials are included in the fee.',
    status: 'active',
    term: 'upcoming',
    capacity: { min: 12, perStudent: 0.06 },
    fee: 30_000,
    demand: 2,
    midtermDay: 85,
    examTitles: ['Midterm portfolio review', 'Final portfolio review'],
  },
];

/**
 * How many courses a student signs up for (1.8 on average). Full courses, graduates (who only
 * took courses that have ended) and students who joined after enrollment closed bring it to about
 * 1.5 enrollments per student.
 */
export const COURSE_LOADS = { '0': 4, '1': 30, '2': 44, '3': 22 } as const;

export const ENDED_STATUSES = { completed: 80, dropped: 14, cancelled: 6 } as const;
export const CURRENT_STATUSES = { active: 86, pending: 5, dropped: 6, cancelled: 3 } as const;
export const UPCOMING_STATUSES = { pending: 55, active: 38, cancelled: 7 } as const;

export const ENROLLMENT_NOTES = [
  'Needs extra time in written exams',
  'Transferred from the evening section',
  'Fee paid by the municipality',
  'Joined late; catching up on the first assignments',
  'Parent asked to be copied on progress reports',
];

export const FAILURE_REASONS = [
  'Card declined by the issuing bank',
  'Insufficient funds',
  'SEPA direct debit returned: account closed',
  '3-D Secure authentication failed',
];

export const OTHER_FEES = [
  { description: 'Annual registration fee', amount: 3_500, share: 0.25 },
  { description: 'Library replacement fee (lost book)', amount: 1_250, share: 0.03 },
  { description: 'Field trip: Natural History Museum', amount: 2_800, share: 0.06 },
];

/** A catalogue course as the builder fills it in: its row, term dates, exams and enrollments. */
export interface CourseInfo {
  spec: CourseSpec;
  row: Course;
  start: number;
  end: number;
  /** When enrollment opens and closes. */
  opens: number;
  closes: number;
  exams: Exam[];
  enrollments: Enrollment[];
}
