/**
 * What the delivery store hands out and takes back: the messages it leases and the attempts it
 * records. Apart from the store, so its users (the dispatchers, the attempter and the recorder)
 * and the admission need not import the store's control flow.
 */
import type { EventType } from '@platform/contract';
import type { AttemptResult } from './sender';

/** A message leased for one attempt, with everything needed to send it. */
export interface ClaimedMessage {
  id: string;
  organizationId: string;
  endpointId: string;
  url: string;
  sealedSecret: string;
  sealedPreviousSecret: string | null;
  previousSecretExpiresAt: Date | null;
  eventId: string;
  eventType: EventType;
  eventCreatedAt: Date;
  eventData: string;
  /** An update event's `previous_attributes` as JSON text; null for the other types. */
  eventPreviousAttributes: string | null;
  /** The event's change feed position; null for a `ping`. */
  eventPosition: number | null;
  /** The position of the change delivered to the endpoint before this one; null if none. */
  previousPosition: number | null;
  /** Attempts recorded when it was read: a queued job carries it, to tell a stale job apart. */
  attemptCount: number;
}

/** One finished attempt, waiting to be written. */
export interface CompletedAttempt {
  messageId: string;
  endpointId: string;
  attemptedAt: Date;
  result: AttemptResult;
  /** The headers sent, signatures withheld; null when no request was made. */
  requestHeaders?: Record<string, string> | null;
}

/** Endpoints the dispatcher disabled while recording, for its log. */
export interface Disabled {
  endpointId: string;
  reason: 'gone' | 'failing';
}
