import { EVENT_DATA } from './generated/event-shapes';
import type { Event, EventType, WebhookEndpointEvent } from './generated/types';

/** The event of one type: `EventOf<'payment.refunded'>`. */
export type EventOf<T extends EventType> = Extract<Event, { type: T }>;

/** What an event of one type carries in `data`. */
export type EventData<T extends EventType> = EventOf<T>['data'];

/** The enrollment state transitions, each its own operation: `enrollments.activate(…)`. */
export type EnrollmentTransition = 'activate' | 'complete' | 'drop' | 'cancel';

/**
 * Every event type a webhook endpoint can subscribe to, from the contract (`ping` is only sent by
 * an endpoint's test operation): for a form that offers them.
 */
export const WEBHOOK_EVENT_TYPES: readonly Exclude<WebhookEndpointEvent, '*'>[] = Object.keys(
  EVENT_DATA,
).filter((type): type is Exclude<WebhookEndpointEvent, '*'> => type !== 'ping');
