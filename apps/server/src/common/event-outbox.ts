import type { EventData, EventType } from '@platform/contract';
import type { EntityManager } from 'typeorm';

/** How an event is recorded besides its type and data. */
export interface RecordOptions {
  /**
   * Delivered by its writer itself (a webhook endpoint's test `ping`): subscribers never claim it.
   * Default true.
   */
  fanOut?: boolean;
  /**
   * An update event's `previous_attributes`: each top-level field of `data` that the change
   * modified, with its value before (`changedFields`).
   */
  previousAttributes?: Record<string, unknown>;
}

/**
 * Where a write records its event, in the writer's own transaction (the transactional outbox).
 * A port, so that the shared write flow here (OwnedRecords) names no feature module: the events
 * module provides it with EventsService, which also fans events out to webhooks.
 */
export abstract class EventOutbox {
  abstract record<T extends EventType>(
    manager: EntityManager,
    organizationId: string,
    type: T,
    data: EventData<T>,
    at?: Date,
    options?: RecordOptions,
  ): Promise<unknown>;

  /** Several events of one organization, in order, in one statement (a batch write). */
  abstract recordMany(
    manager: EntityManager,
    organizationId: string,
    events: readonly NewEvent[],
  ): Promise<unknown>;
}

/** One event of `recordMany`. */
export interface NewEvent extends RecordOptions {
  type: EventType;
  data: unknown;
  at?: Date;
}
