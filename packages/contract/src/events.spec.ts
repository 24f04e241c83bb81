import {
  canReadEventType,
  ChangesQuerySchema,
  EVENT_READ_SCOPES,
  EVENT_TYPES,
  EventSchema,
  isUpdateEventType,
  readableEventTypes,
  readScopesForEvents,
  UPDATE_EVENT_TYPES,
} from './events';
import { API_VERSION } from './version';
import { ALL_SCOPES } from './scopes';

describe('EVENT_READ_SCOPES', () => {
  it('gives every event type the read scope of its resource (exams are read with exam_results)', () => {
    for (const type of EVENT_TYPES) {
      const resource = type.split('.')[0]!;
      const expected =
        type === 'ping' ? null : `${resource === 'exam' ? 'exam_result' : resource}s:read`;
      expect([type, EVENT_READ_SCOPES[type]]).toEqual([type, expected]);
      if (expected) expect(ALL_SCOPES).toContain(expected);
    }
  });

  it('needs for * every scope any type needs, and none for ping', () => {
    // Derived from the catalogue, so a resource added with its events needs no edit here.
    const each = EVENT_TYPES.flatMap((type) => readScopesForEvents([type]));
    expect(readScopesForEvents(['*'])).toEqual([...new Set(each)].sort());
    expect(readScopesForEvents(['*'])).toContain('students:read');
    expect(readScopesForEvents(['ping'])).toEqual([]);
    expect(readScopesForEvents(['payment.refunded', 'payment.failed'])).toEqual(['payments:read']);
  });

  it('has no events:write scope: events are written only by the changes they record', () => {
    expect(ALL_SCOPES).toContain('events:read');
    expect(ALL_SCOPES).not.toContain('events:write');
  });

  it('reads an event only with its resource read scope; ping with none; an unknown type never', () => {
    const scopes = new Set(['events:read', 'courses:read']);
    expect(canReadEventType(scopes, 'course.created')).toBe(true);
    expect(canReadEventType(scopes, 'student.created')).toBe(false);
    expect(canReadEventType(scopes, 'ping')).toBe(true);
    expect(canReadEventType(new Set(ALL_SCOPES), 'student.exploded')).toBe(false);
    expect(canReadEventType(new Set(ALL_SCOPES), 'toString')).toBe(false);
    expect(readableEventTypes(scopes)).toEqual([
      'course.created',
      'course.updated',
      'course.deleted',
      'ping',
    ]);
  });
});

describe('previous_attributes', () => {
  it('is carried by the update types (updates and status transitions) only', () => {
    expect(UPDATE_EVENT_TYPES).toEqual([
      'student.updated',
      'course.updated',
      'enrollment.updated',
      'enrollment.active',
      'enrollment.completed',
      'enrollment.dropped',
      'enrollment.cancelled',
      'payment.succeeded',
      'payment.failed',
      'payment.refunded',
      'exam.updated',
      'exam_result.updated',
      'exam_result.published',
    ]);
    expect(isUpdateEventType('student.created')).toBe(false);
    expect(isUpdateEventType('toString')).toBe(false);
  });

  it('is a partial of the resource on an update type, and absent from the others', () => {
    const base = {
      id: 'evt_01JD6Y3ZK8R5V2N3M4P5Q6R7S8',
      position: 1,
      cursor: '1.Xk3aB9_-q1',
      object: 'event',
      timestamp: '2026-12-02T10:00:00.000Z',
      api_version: API_VERSION,
    };
    const student = {
      id: 'stu_01JD6Y3ZK8R5V2N3M4P5Q6R7S8',
      object: 'student',
      external_id: null,
      student_number: 'S-1',
      first_name: 'Ada',
      last_name: 'Lovelace',
      preferred_name: null,
      email: 'new@example.com',
      date_of_birth: null,
      status: 'active',
      grade_level: null,
      created_at: '2026-12-02T09:00:00.000Z',
      updated_at: '2026-12-02T10:00:00.000Z',
    };
    const updated = { ...base, type: 'student.updated', data: student };
    const previous = { email: 'old@example.com', updated_at: '2026-12-02T09:00:00.000Z' };
    const parsed = EventSchema.parse({ ...updated, previous_attributes: previous });
    expect(parsed.type === 'student.updated' && parsed.previous_attributes).toEqual(previous);
    expect(EventSchema.safeParse({ ...updated, previous_attributes: { email: 7 } }).success).toBe(
      false,
    );
    expect(EventSchema.safeParse(updated).success).toBe(false);
    const created = EventSchema.parse({ ...base, type: 'student.created', data: student });
    expect('previous_attributes' in created).toBe(false);
  });
});

describe('change feed cursors in a query', () => {
  const tag = 'Xk3aB9_-q1';
  const errors = (query: Record<string, string>) => {
    const parsed = ChangesQuerySchema.safeParse(query);
    return parsed.success ? [] : parsed.error.issues.map((issue) => issue.path.join('.'));
  };

  it('takes what the API issues: a cursor, 0, and oldest as the start', () => {
    for (const cursor of [`1.${tag}`, `42.${tag}`, `${'9'.repeat(18)}.${tag}`, '0']) {
      expect(errors({ after: cursor, until: cursor })).toEqual([]);
    }
    expect(errors({ after: 'oldest' })).toEqual([]);
  });

  it('refuses a bare position and anything malformed, naming the parameter', () => {
    for (const cursor of [
      '42',
      '',
      'abc',
      `01.${tag}`,
      `1.${tag}x`,
      `1.${tag.slice(1)}`,
      `1.${tag}.`,
      `1e3.${tag}`,
      ` 1.${tag}`,
      `${'9'.repeat(19)}.${tag}`,
      `1.Xk3aB9_+q1`,
    ]) {
      expect([cursor, errors({ after: cursor })]).toEqual([cursor, ['after']]);
      expect([cursor, errors({ until: cursor })]).toEqual([cursor, ['until']]);
    }
    expect(errors({ until: 'oldest' })).toEqual(['until']);
  });
});
