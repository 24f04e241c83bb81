import { Injectable } from '@nestjs/common';
import { API_VERSION, type EventData, type EventType } from '@platform/contract';
import type { EntityManager } from 'typeorm';
import { newId } from '../common/ids';
import { EventRecord } from './event.entity';

/**
 * Writes domain events to the outbox. It takes the caller's transaction (`manager`) on purpose:
 * an event exists if and only if the change that caused it committed.
 */
@Injectable()
export class EventsService {
  async record<T extends EventType>(
    manager: EntityManager,
    organizationId: string,
    type: T,
    data: EventData<T>,
    at = new Date(),
  ): Promise<EventRecord> {
    const event: EventRecord = {
      id: newId('event', at.getTime()),
      organizationId,
      type,
      apiVersion: API_VERSION,
      data: JSON.stringify(data),
      createdAt: at,
    };
    await manager.insert(EventRecord, event);
    return event;
  }
}
