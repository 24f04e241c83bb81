import type { EventType } from '@platform/contract';
import { payload } from '../webhooks/attempter';
import { toEventResource } from './events.service';

/** An enrollment event's data as it was stored before enrollments had external ids. */
const BEFORE = JSON.stringify({
  id: 'enr_01JD6Y0A1B2C3D4E5F6G7H8J9K',
  object: 'enrollment',
  student_id: 'stu_01JD6XZ8Y7X6W5V4T3S2R1Q0P9',
  status: 'active',
});
const stored = (type: EventType, data: string) => ({
  organizationId: 'org_01JD6XZ0000000000000000000',
  id: 'evt_01JD6Y4A2B3C4D5E6F7G8H9J0K',
  position: 7,
  type,
  createdAt: new Date('2026-12-01T10:00:00.000Z'),
  data,
  previousAttributes: null,
});
const message = (type: EventType, eventData: string) => ({
  organizationId: 'org_01JD6XZ0000000000000000000',
  eventId: 'evt_01JD6Y4A2B3C4D5E6F7G8H9J0K',
  eventType: type,
  eventCreatedAt: new Date('2026-12-01T10:00:00.000Z'),
  eventData,
  eventPreviousAttributes: null,
  eventPosition: 7,
  previousPosition: 6,
});

describe('events recorded before their resource had external_id', () => {
  it('read with external_id null, in the events API and in webhook deliveries alike', () => {
    const event = toEventResource(stored('enrollment.active', BEFORE));
    expect(event.data).toEqual({ ...JSON.parse(BEFORE), external_id: null });
    const delivered = JSON.parse(payload(message('enrollment.active', BEFORE))) as {
      data: Record<string, unknown>;
    };
    expect(delivered.data).toEqual(event.data);
  });

  it('keep what they carry: a recorded external_id, and data of objects without one', () => {
    const now = JSON.stringify({ ...JSON.parse(BEFORE), external_id: 'enr-7' });
    expect(toEventResource(stored('enrollment.active', now)).data).toEqual(JSON.parse(now));
    expect(payload(message('enrollment.active', now))).toContain(`"data":${now}`);
    const tombstone = { id: 'enr_01JD6Y0A1B2C3D4E5F6G7H8J9K', object: 'enrollment', deleted: true };
    expect(toEventResource(stored('course.deleted', JSON.stringify(tombstone))).data).toEqual(
      tombstone,
    );
    const ping = JSON.stringify({ message: 'ping' });
    expect(JSON.parse(payload(message('ping', ping))).data).toEqual({
      message: 'ping',
    });
  });
});
