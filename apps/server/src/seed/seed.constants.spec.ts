import { type IdKind, idPattern } from '@platform/contract';
import {
  DEMO_COURSE_IDS,
  DEMO_ENROLLMENT_IDS,
  DEMO_EXAM_IDS,
  DEMO_EXAM_RESULT_IDS,
  DEMO_ORGANIZATION_ID,
  DEMO_PAYMENT_IDS,
  DEMO_STUDENT_IDS,
} from './seed.constants';

describe('fixed demo ids', () => {
  const fixed: [IdKind, readonly string[]][] = [
    ['organization', [DEMO_ORGANIZATION_ID]],
    ['student', DEMO_STUDENT_IDS],
    ['course', Object.values(DEMO_COURSE_IDS)],
    ['enrollment', Object.values(DEMO_ENROLLMENT_IDS)],
    ['payment', Object.values(DEMO_PAYMENT_IDS)],
    ['exam', Object.values(DEMO_EXAM_IDS)],
    ['exam_result', Object.values(DEMO_EXAM_RESULT_IDS)],
  ];

  it.each(fixed)('%s ids are valid public ids of their kind', (kind, ids) => {
    expect(ids.length).toBeGreaterThan(0);
    for (const id of ids) expect(id).toMatch(idPattern(kind));
  });

  it('are all different', () => {
    const all = fixed.flatMap(([, ids]) => ids);
    expect(new Set(all).size).toBe(all.length);
  });
});
