import type { Event, EventType } from './generated/types';

/** The event of one type: `EventOf<'payment.refunded'>`. */
export type EventOf<T extends EventType> = Extract<Event, { type: T }>;

/** What an event of one type carries in `data`. */
export type EventData<T extends EventType> = EventOf<T>['data'];

/** The enrollment state transitions, each its own operation: `enrollments.activate(…)`. */
export type EnrollmentTransition = 'activate' | 'complete' | 'drop' | 'cancel';
