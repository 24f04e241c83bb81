/**
 * Reading a seeded school year back through the API, and the rules its data must keep
 * (test/cli.e2e-spec.ts seeds one with `pnpm platform seed`).
 */
import type { Course, Enrollment, Exam, ExamResult, Payment } from '@platform/contract';

/** Every item of a list, page by page; the total must match what the seed reported. */
export async function all<T>(
  name: string,
  total: number,
  list: (query: { per_page: number; page: number }) => Promise<{
    status: number;
    body: unknown;
  }>,
): Promise<T[]> {
  const items: T[] = [];
  for (let page = 1; ; page++) {
    const res = await list({ per_page: 100, page });
    expect({ name, status: res.status }).toEqual({ name, status: 200 });
    const body = res.body as { data: T[]; meta: { total_pages: number } };
    items.push(...body.data);
    if (page >= body.meta.total_pages) break;
  }
  expect({ name, total: items.length }).toEqual({ name, total });
  return items;
}

/**
 * Each id answers 200 with the record its list page showed, field for field and in the same order
 * (a list maps raw rows, a retrieve the entity: the two must not drift).
 */
export async function retrieved(
  retrieve: (args: { params: { id: string } }) => Promise<{ status: number; body: unknown }>,
  ids: readonly string[],
  listed: readonly { id: string }[],
) {
  for (const id of ids) {
    const res = await retrieve({ params: { id } });
    const item = listed.find((record) => record.id === id);
    expect({ id, status: res.status, body: JSON.stringify(res.body) }).toEqual({
      id,
      status: 200,
      body: JSON.stringify(item),
    });
  }
}

/** The seeded school year keeps the rules the API enforces on writes. */
export function expectValidSchoolYear({
  courses,
  exams,
  enrolled,
  paid,
  results,
}: {
  courses: Course[];
  exams: Exam[];
  enrolled: Enrollment[];
  paid: Payment[];
  results: ExamResult[];
}) {
  expect(courses.filter((c) => c.status === 'archived')).toHaveLength(1);
  expect(new Set(enrolled.map((e) => e.status))).toEqual(
    new Set(['pending', 'active', 'completed', 'dropped', 'cancelled']),
  );

  // No course over capacity, one live enrollment per student and course.
  const live = enrolled.filter((e) => e.status === 'pending' || e.status === 'active');
  for (const course of courses) {
    const seats = live.filter((e) => e.course_id === course.id).length;
    if (course.capacity !== null) expect(seats).toBeLessThanOrEqual(course.capacity);
  }
  const pairs = live.map((e) => `${e.student_id} ${e.course_id}`);
  expect(new Set(pairs).size).toBe(pairs.length);

  // Refunds within the amount, and only on refunded payments.
  for (const p of paid) {
    expect(p.amount_refunded).toBeLessThanOrEqual(p.amount);
    expect(p.amount_refunded > 0).toBe(p.status === 'refunded');
  }
  expect(paid.some((p) => p.status === 'succeeded')).toBe(true);

  // Results within max_score, for students enrolled (active or completed) in the course.
  const examsById = new Map(exams.map((e) => [e.id, e]));
  for (const r of results) {
    const exam = examsById.get(r.exam_id);
    expect(r.score).toBeLessThanOrEqual(exam!.max_score);
    expect(
      enrolled.some(
        (e) =>
          e.student_id === r.student_id &&
          e.course_id === exam!.course_id &&
          (e.status === 'active' || e.status === 'completed'),
      ),
    ).toBe(true);
  }
  expect(results.filter((r) => r.status === 'published').length).toBeGreaterThan(
    results.length / 2,
  );
}
