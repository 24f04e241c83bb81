import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import {
  API_VERSION,
  canReadEventType,
  isUpdateEventType,
  contract,
  type Event,
  EVENT_RETENTION_DAYS,
  type EventData,
  type EventType,
  type ListQuery,
  readableEventTypes,
} from '@platform/contract';
import type { EntityManager, Repository } from 'typeorm';
import type { Principal } from '../common/principal';
import { Clock } from '../common/clock';
import { EventOutbox, type NewEvent, type RecordOptions } from '../common/event-outbox';
import { newId } from '../common/ids';
import { ListCollection } from '../common/list/find-page';
import { pageEnvelope, type PageUrl } from '../common/list/page-envelope';
import { notFound } from '../common/resource-errors';
import { toIso } from '../common/timestamp';
import { TransactionRunner } from '../common/transactions';
import { withExternalId } from './event-data';
import { Sql } from '../database/sql';
import { insertRows } from '../database/write-rows';
import { EventRecord } from './event.entity';
import { encodeFeedCursor } from './feed-cursor';
import { FeedPositions } from './feed-position';

const RETENTION_MS = EVENT_RETENTION_DAYS * 86_400_000;

/** An event waiting to be handed to its subscribers (webhook endpoints). */
export interface PendingFanOut {
  id: string;
  organizationId: string;
  type: EventType;
  /** Its change feed position (every event fanned out is a change). */
  position: number;
}

/** How much one fan-out claim takes: `limit` events, at most `perOrganization` of one organization. */
export interface FanOutClaim {
  limit: number;
  perOrganization: number;
  /** Reads at most: a read past the first happens only when an organization filled its share. */
  reads: number;
}

/** The stored columns an event's API view is made of. */
export type StoredEvent = Pick<
  EventRecord,
  'organizationId' | 'id' | 'position' | 'type' | 'createdAt' | 'data' | 'previousAttributes'
>;

export function toEventResource(record: StoredEvent): Event {
  return {
    id: record.id,
    position: record.position,
    cursor:
      record.position === null ? null : encodeFeedCursor(record.organizationId, record.position),
    object: 'event',
    type: record.type,
    timestamp: toIso(record.createdAt),
    api_version: API_VERSION,
    data: withExternalId(JSON.parse(record.data) as Event['data']),
    ...(isUpdateEventType(record.type) && {
      previous_attributes:
        record.previousAttributes === null
          ? null
          : (JSON.parse(record.previousAttributes) as Record<string, unknown>),
    }),
  } as Event;
}

/**
 * Writes domain events to the outbox. It takes the caller's transaction (`manager`) on purpose:
 * an event exists if and only if the change that caused it committed. It owns the `events`
 * table: subscribers take new events through `claimPendingFanOut` rather than writing it.
 */
@Injectable()
export class EventsService implements EventOutbox {
  private readonly committedListeners: (() => void)[] = [];
  private readonly changeListeners: ((organizationIds: readonly string[]) => void)[] = [];
  /** Transactions that already announce an event on commit (one announcement each). */
  private readonly announcing = new WeakSet<EntityManager>();
  /** Per open transaction, the changes it recorded that get feed positions before it commits. */
  private readonly unplaced = new WeakMap<EntityManager, Map<string, string[]>>();
  /** Per open SQLite transaction, the organizations whose first changes it numbered as written. */
  private readonly placed = new WeakMap<EntityManager, Set<string>>();
  private statements: ReturnType<typeof fanOutStatements> | undefined;

  private readonly listed: ListCollection<EventRecord>;

  constructor(
    @InjectRepository(EventRecord) private readonly events: Repository<EventRecord>,
    private readonly sql: Sql,
    private readonly transactions: TransactionRunner,
    private readonly clock: Clock,
    private readonly positions: FeedPositions,
  ) {
    // Events never change after they are written, so `updated_at` (and `updated_since`) is `created_at`.
    this.listed = ListCollection.of(this.sql, events, contract.events.list.query, {
      updated_at: 'created_at',
    });
  }

  /**
   * Calls `listener` after each transaction that wrote an event commits: the webhook dispatcher
   * picks a new event up at once rather than on its next poll. The dispatcher's own
   * transactions write no events, so it never wakes itself. Listeners must not throw.
   */
  onEventCommitted(listener: () => void): void {
    this.committedListeners.push(listener);
  }

  /**
   * Calls `listener` with the organizations whose change feed moved, after each transaction that
   * gave changes positions commits: the feed's waiting reads wake on it. Listeners must not throw.
   */
  onChangeCommitted(listener: (organizationIds: readonly string[]) => void): void {
    this.changeListeners.push(listener);
  }

  /**
   * The last 30 days of the organization's events, through the list convention: only the types
   * the caller may read (`canReadEventType`), the others left out as the change feed does.
   */
  async list(principal: Principal, query: ListQuery, url: PageUrl) {
    const retained: ListQuery = {
      ...query,
      conditions: [
        ...query.conditions,
        { field: 'created_at', op: 'gte', value: new Date(this.clock.nowMs() - RETENTION_MS) },
        { field: 'type', op: 'in', values: readableEventTypes(principal.scopes) },
      ],
    };
    const { rows, total } = await this.listed.find(principal.organizationId, retained);
    return { data: rows.map(toEventResource), ...pageEnvelope(url, query, total) };
  }

  /** One event; 404 (as if absent, so its existence does not leak) when the caller may not read it. */
  async retrieve(principal: Principal, id: string): Promise<Event> {
    const record = await this.events.findOneBy({ id, organizationId: principal.organizationId });
    if (
      !record ||
      record.createdAt.getTime() < this.clock.nowMs() - RETENTION_MS ||
      !canReadEventType(principal.scopes, record.type)
    )
      throw notFound('event', id);
    return toEventResource(record);
  }

  /**
   * Writes an event in the caller's transaction. `fanOut: false` is for an event its writer
   * delivers itself (a webhook endpoint's test `ping`): subscribers never claim it. An update
   * type's `previousAttributes` is stored with it (`{}` when none is given).
   */
  async record<T extends EventType>(
    manager: EntityManager,
    organizationId: string,
    type: T,
    data: EventData<T>,
    at = this.clock.now(),
    options: RecordOptions = {},
  ): Promise<EventRecord> {
    const [event] = await this.recordMany(manager, organizationId, [
      { type, data, at, ...options },
    ]);
    return event!;
  }

  /**
   * Several events of one organization in the caller's transaction, in order, in one INSERT
   * (a batch upsert's): as `record` each, at a fraction of the statements.
   */
  async recordMany(
    manager: EntityManager,
    organizationId: string,
    events: readonly NewEvent[],
  ): Promise<EventRecord[]> {
    const records = events.map(
      ({ type, data, at = this.clock.now(), fanOut, previousAttributes }): EventRecord => ({
        id: newId('event', at.getTime()),
        organizationId,
        type,
        apiVersion: API_VERSION,
        data: JSON.stringify(data),
        previousAttributes: isUpdateEventType(type)
          ? JSON.stringify(previousAttributes ?? {})
          : null,
        createdAt: at,
        fanoutPending: fanOut ?? true,
        position: null,
      }),
    );
    if (records.length === 0) return records;
    const placedNow = await this.placeNow(manager, organizationId, records);
    // Plain INSERTs (insertRows). TypeORM's `insert` would read the row back after it on SQLite,
    // for the column with a default, though every value is given here: on a bulk write or a busy
    // outbox that extra statement was a tenth of the process's CPU.
    await insertRows(manager, EventRecord, records);
    if (!placedNow)
      for (const event of records) if (event.fanoutPending) await this.placeInFeed(manager, event);
    if (!this.announcing.has(manager)) {
      this.announcing.add(manager);
      this.transactions.afterCommit(manager, () => {
        for (const listener of this.committedListeners) listener();
      });
    }
    return records;
  }

  /**
   * On SQLite, for an organization's first changes in a transaction of ours, gives the changes
   * among `records` their feed positions before they are written (true). Otherwise (PostgreSQL,
   * `manager` outside our transactions, or later changes of the same transaction) they are
   * written without one and numbered before COMMIT (false), in one pass for all of them. SQLite
   * has one writer: from its first write to its COMMIT the transaction holds the database's
   * write lock, so positions taken now still become visible in order, and a savepoint that rolls
   * back undoes the counter with the rows. A single write, or a batch of 1,000 changes, saves
   * the pass that finds its rows and the UPDATE that numbers them (and each row's second write
   * to the position index); a transaction recording changes one by one numbers the rest at once.
   */
  private async placeNow(
    manager: EntityManager,
    organizationId: string,
    records: readonly EventRecord[],
  ): Promise<boolean> {
    if (this.sql.dialect !== 'sqlite' || !this.transactions.isOpen(manager)) return false;
    let placed = this.placed.get(manager);
    if (placed?.has(organizationId)) return false;
    if (!placed) this.placed.set(manager, (placed = new Set()));
    placed.add(organizationId);
    const changes = records.filter((event) => event.fanoutPending);
    if (changes.length === 0) return true;
    const first = await this.positions.take(manager, organizationId, changes.length);
    changes.forEach((event, i) => (event.position = first + i));
    this.transactions.afterCommit(manager, () => {
      for (const listener of this.changeListeners) listener([organizationId]);
    });
    return true;
  }

  /**
   * Gives a change its feed position as the last work of its transaction (the counter's row lock
   * is then held only for the COMMIT), or at once when `manager` is not a transaction of ours.
   */
  private async placeInFeed(manager: EntityManager, event: EventRecord): Promise<void> {
    let pending = this.unplaced.get(manager);
    if (!pending) {
      pending = new Map();
      const registered = this.transactions.beforeCommit(manager, async () => {
        const byOrganization = pending!;
        this.unplaced.delete(manager);
        for (const [organizationId, ids] of byOrganization)
          await this.positions.allocate(manager, organizationId, ids);
        const organizationIds = [...byOrganization.keys()];
        this.transactions.afterCommit(manager, () => {
          for (const listener of this.changeListeners) listener(organizationIds);
        });
      });
      if (!registered) {
        await this.positions.allocate(manager, event.organizationId, [event.id]);
        for (const listener of this.changeListeners) listener([event.organizationId]);
        return;
      }
      this.unplaced.set(manager, pending);
    }
    const ids = pending.get(event.organizationId);
    if (ids) ids.push(event.id);
    else pending.set(event.organizationId, [event.id]);
  }

  /**
   * Takes committed events not yet fanned out, oldest first, and clears their marker in the
   * caller's transaction: the caller makes what they fan out to in the same transaction, so an
   * event is fanned out exactly once. At most `perOrganization` of one organization per claim, so
   * a tenant's bulk import is spread over several claims and cannot delay the others' events.
   * On PostgreSQL the rows are locked with SKIP LOCKED, so concurrent claims never overlap.
   */
  async claimPendingFanOut(manager: EntityManager, claim: FanOutClaim): Promise<PendingFanOut[]> {
    const statements = (this.statements ??= fanOutStatements(this.sql));
    const pending = this.sql.bind(EventRecord, 'fanoutPending', true);
    const events: PendingFanOut[] = [];
    const perOrganization = new Map<string, number>();
    const full = new Set<string>();
    for (let read = 0; read < claim.reads && events.length < claim.limit; read += 1) {
      const limit = claim.limit - events.length;
      const rows = full.size
        ? await this.sql.query<PendingRow>(manager, statements.pendingExcept, {
            pending,
            limit,
            full: [...full],
          })
        : await this.sql.query<PendingRow>(manager, statements.pending, { pending, limit });
      let filled = false;
      for (const row of rows) {
        const n = perOrganization.get(row.organization_id) ?? 0;
        if (n >= claim.perOrganization) {
          filled ||= !full.has(row.organization_id);
          full.add(row.organization_id);
          continue;
        }
        perOrganization.set(row.organization_id, n + 1);
        events.push({
          id: row.id,
          organizationId: row.organization_id,
          type: row.type,
          position: Number(row.position),
        });
      }
      // Read again only past an organization that filled its share in a full window.
      if (rows.length < limit || !filled) break;
    }
    if (events.length > 0) {
      await this.sql.query(manager, statements.done, {
        done: this.sql.bind(EventRecord, 'fanoutPending', false),
        ids: events.map((event) => event.id),
      });
    }
    return events;
  }
}

type PendingRow = {
  id: string;
  organization_id: string;
  type: EventType;
  position: string | number;
};

/** The fan-out claim's statements, with the table's names from the entity's metadata. */
function fanOutStatements(sql: Sql) {
  const events = sql.table(EventRecord);
  const [id, organizationId, type, createdAt, fanoutPending, position] = (
    ['id', 'organizationId', 'type', 'createdAt', 'fanoutPending', 'position'] as const
  ).map((property) => sql.column(EventRecord, property));
  const pending = (except: string) =>
    `SELECT ${id} AS id, ${organizationId} AS organization_id, ${type} AS type, ${position} AS position
     FROM ${events}
     WHERE ${fanoutPending} = :pending${except}
     ORDER BY ${createdAt}, ${id} LIMIT :limit${sql.lockRows({ skipLocked: true })}`;
  return {
    pending: pending(''),
    pendingExcept: pending(` AND ${organizationId} NOT IN (:...full)`),
    done: `UPDATE ${events} SET ${fanoutPending} = :done WHERE ${id} IN (:...ids)`,
  };
}
