import { STUDENT_STATUSES, type StudentStatus } from '@platform/contract';
import type { Student } from '../students/student.entity';
import { demoId } from './ids';
import { prng } from './random';

const FIRST_NAMES = [
  'Amara',
  'Ben',
  'Chloé',
  'Dmitri',
  'Elif',
  'Farah',
  'Gabriel',
  'Hana',
  'Isaac',
  'Jamal',
  'Keiko',
  'Liam',
  'Maya',
  'Noah',
  'Olivia',
  'Priya',
  'Quentin',
  'Rosa',
  'Samuel',
  'Tariq',
  'Uma',
  'Victor',
  'Wen',
  'Yusuf',
  'Zoe',
];
const LAST_NAMES = [
  'Adeyemi',
  'Bauer',
  'Castillo',
  'Dubois',
  'Eriksen',
  'Fernandes',
  'García',
  'Hoffmann',
  'Ito',
  'Jensen',
  'Kowalski',
  'López',
  'Müller',
  'Nakamura',
  "O'Brien",
  'Patel',
  'Quinn',
  'Rossi',
  'Schmidt',
  'Tanaka',
  'Usman',
  'Varga',
  'Walker',
  'Xu',
  'Yilmaz',
  'Zhang',
];

/**
 * `count` realistic students for an organization, created over the year before `now`, oldest first.
 * `fixedIds` name the first few (the demo organization's documented students). The same `seed`
 * and count give the same students (but for ids made without `fixedIds`).
 */
export function demoStudents(
  organizationId: string,
  count: number,
  // The seed passes the server's Clock; the default serves tests and benches that build rows alone.
  now = Date.now(),
  fixedIds: readonly string[] = [],
  /** Another seed, another school (a sandbox's); the demo organization's is 0. */
  seed = 0,
): Student[] {
  const random = prng(20261122 + 2 * seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const yearMs = 365 * 24 * 3600 * 1000;
  const start = now - yearMs;
  const step = count > 1 ? yearMs / count : 0;
  const students: Student[] = [];
  for (let i = 0; i < count; i++) {
    const createdAt = new Date(Math.floor(start + i * step));
    const first = pick(FIRST_NAMES);
    const last = pick(LAST_NAMES);
    const grade = Math.floor(random() * 13);
    const birthYear = new Date(now).getUTCFullYear() - 6 - grade;
    const month = 1 + Math.floor(random() * 12);
    const day = 1 + Math.floor(random() * 28);
    const roll = random();
    const status: StudentStatus =
      roll < 0.85 ? 'active' : STUDENT_STATUSES[1 + Math.floor(random() * 3)]!;
    const emailLocal = `${first}.${last}`
      .normalize('NFD')
      .replace(/[^A-Za-z.]/g, '')
      .toLowerCase();
    const updatedAt = new Date(
      Math.min(now, createdAt.getTime() + Math.floor(random() * 30 * 24 * 3600 * 1000)),
    );
    students.push({
      id: fixedIds[i] ?? demoId('student', createdAt.getTime()),
      organizationId,
      externalId: null,
      studentNumber: `S${String(i + 1).padStart(6, '0')}`,
      firstName: first,
      lastName: last,
      preferredName: random() < 0.1 ? first.slice(0, 3) : null,
      email: random() < 0.9 ? `${emailLocal}${i + 1}@students.demo-school.example` : null,
      dateOfBirth: `${birthYear}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`,
      status,
      gradeLevel: grade,
      createdAt,
      updatedAt,
    });
  }
  return students;
}
