import {
  canReadEventType,
  EVENT_READ_SCOPES,
  EVENT_TYPES,
  readableEventTypes,
  readScopesForEvents,
} from './events';
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
