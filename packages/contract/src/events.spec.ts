import { EVENT_READ_SCOPES, EVENT_TYPES, readScopesForEvents } from './events';
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

  it('needs every resource read scope for *, and none for ping', () => {
    expect(readScopesForEvents(['*'])).toEqual([
      'courses:read',
      'enrollments:read',
      'exam_results:read',
      'payments:read',
      'students:read',
    ]);
    expect(readScopesForEvents(['ping'])).toEqual([]);
    expect(readScopesForEvents(['payment.refunded', 'payment.failed'])).toEqual(['payments:read']);
  });

  it('has no events:write scope: events are written only by the changes they record', () => {
    expect(ALL_SCOPES).toContain('events:read');
    expect(ALL_SCOPES).not.toContain('events:write');
  });
});
