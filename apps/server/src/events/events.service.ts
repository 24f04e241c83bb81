import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import {
  API_VERSION,
  type Event,
  type EventData,
  EVENT_RETENTION_DAYS,
  type EventType,
  type ListQuery,
} from '@platform/contract';
import type { EntityManager, Repository } from 'typeorm';
import type { Principal } from '../auth/principal';
import { newId } from '../common/ids';
import { findPage, type ListFields } from '../common/list/find-page';
import { pageEnvelope, type PageUrl } from '../common/list/page-envelope';
import { notFound } from '../common/resource-errors';
import { toIso } from '../common/timestamp';
import { EventRecord } from './event.entity';

const EVENT_LIST_FIELDS: ListFields = {
  // Events never change after they are written, so `updated_at` (and `updated_since`) is `created_at`.
  columns: { type: 'type', created_at: 'createdAt', updated_at: 'createdAt' },
};

const RETENTION_MS = EVENT_RETENTION_DAYS * 86_400_000;

export function toEventResource(record: EventRecord): Event {
  return {
    id: record.id,
    object: 'event',
    type: record.type,
    timestamp: toIso(record.createdAt),
    api_version: API_VERSION,
    data: JSON.parse(record.data) as Event['data'],
  } as Event;
}

/**
 * Writes domain events to the outbox. It takes the caller's transaction (`manager`) on purpose:
 * an event exists if and only if the change that caused it committed.
 */
@Injectable()
export class EventsService {
  constructor(@InjectRepository(EventRecord) private readonly events: Repository<EventRecord>) {}

  /** The last 30 days of the organization's events, through the list convention. */
  async list(principal: Principal, query: ListQuery, url: PageUrl) {
    const retained: ListQuery = {
      ...query,
      conditions: [
        ...query.conditions,
        { field: 'created_at', op: 'gte', value: new Date(Date.now() - RETENTION_MS) },
      ],
    };
    const { rows, total } = await findPage(
      this.events,
      principal.organizationId,
      retained,
      EVENT_LIST_FIELDS,
    );
    return { data: rows.map(toEventResource), ...pageEnvelope(url, query, total) };
  }

  async retrieve(principal: Principal, id: string): Promise<Event> {
    const record = await this.events.findOneBy({ id, organizationId: principal.organizationId });
    if (!record || record.createdAt.getTime() < Date.now() - RETENTION_MS)
      throw notFound('event', id);
    return toEventResource(record);
  }

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
      fanoutPending: type !== 'ping',
    };
    await manager.insert(EventRecord, event);
    return event;
  }
}
