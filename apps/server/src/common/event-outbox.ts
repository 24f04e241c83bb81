import type { EventData, EventType } from '@platform/contract';
import type { EntityManager } from 'typeorm';

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
  ): Promise<unknown>;
}
