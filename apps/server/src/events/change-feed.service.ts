import { Inject, Injectable, Logger, type OnModuleDestroy, Optional } from '@nestjs/common';
import {
  type ChangePage,
  type ChangesQuery,
  EVENT_RETENTION_DAYS,
  type EventType,
  FEED_LIMITS,
  readableEventTypes,
} from '@platform/contract';
import type { Redis } from 'ioredis';
import { Clock } from '../common/clock';
import type { Principal } from '../common/principal';
import { ProblemException } from '../common/problem.exception';
import type { EntityManager } from 'typeorm';
import { TransactionRunner } from '../common/transactions';
import { Sql, type SqlParams } from '../database/sql';
import { REDIS } from '../redis/redis.module';
import { EventRecord, FeedHead } from './event.entity';
import { EventsService, toEventResource } from './events.service';
import { decodeFeedCursor, encodeFeedCursor } from './feed-position';

const RETENTION_MS = EVENT_RETENTION_DAYS * 86_400_000;
/** Where instances tell each other an organization's feed moved (scale-out deployment). */
const CHANNEL = 'platform:feed';
/**
 * A waiting read looks again this often even without a wake-up: the safety net for a missed
 * notice (a Redis hiccup), and how instances without Redis between them see each other's changes.
 */
const POLL_MS = 1000;

type FeedSelect = <T>(text: string, params: SqlParams) => Promise<T[]>;

interface FeedRow {
  id: string;
  type: EventType;
  data: string;
  previous_attributes: string | null;
  created_at: unknown;
  position: string | number;
}

/**
 * The change feed: an organization's events after a cursor, in position order (see
 * FeedPositions for why that order never skips a change that commits later). A read with `wait`
 * and nothing new sleeps until a change of its organization commits: on this instance through
 * EventsService, on others through Redis pub/sub when Redis is configured, else by polling.
 */
@Injectable()
export class ChangeFeedService implements OnModuleDestroy {
  private readonly logger = new Logger('ChangeFeed');
  private readonly waiting = new Map<string, Set<() => void>>();
  private statements: ReturnType<typeof feedReadStatements> | undefined;
  private subscriber: Redis | undefined;
  private closed = false;

  constructor(
    private readonly sql: Sql,
    private readonly transactions: TransactionRunner,
    private readonly clock: Clock,
    events: EventsService,
    // Absent where no Redis module is loaded (the CLI): nothing there waits on the feed.
    @Optional() @Inject(REDIS) private readonly redis: Redis | null = null,
  ) {
    events.onChangeCommitted((organizationIds) => {
      for (const organizationId of organizationIds) this.wake(organizationId);
      if (this.redis) {
        for (const organizationId of organizationIds)
          this.redis.publish(CHANNEL, organizationId).catch(() => undefined);
      }
    });
    if (this.redis) this.listen(this.redis);
  }

  /**
   * The changes after `query.after` the principal may read, waiting up to `wait` for one.
   * `recheck` gives the caller's access as of now (or throws 401/403 when it has ended): called
   * each time a waiting read wakes, before it reads, so a revoked token, a removed member or a
   * narrowed role reads nothing more.
   */
  async read(
    principal: Principal,
    query: ChangesQuery,
    recheck?: () => Promise<Principal>,
  ): Promise<ChangePage> {
    const organizationId = principal.organizationId;
    const cursor = decodeFeedCursor(query.after ?? '0');
    if (cursor === undefined) throw badCursor('after is not a cursor this API returned');
    const limit = query.limit ?? FEED_LIMITS.defaultLimit;
    // A `ping` is no change (it has no position); the others as every read of an event.
    const readableBy = (caller: Principal) =>
      readableEventTypes(caller.scopes).filter(
        (type) =>
          type !== 'ping' && (!query.type || (query.type as readonly string[]).includes(type)),
      );
    let readable = readableBy(principal);
    const deadline = this.clock.nowMs() + (query.wait ?? 0) * 1000;
    let after = cursor;
    for (;;) {
      // Registered before reading, so a change that commits during the read still wakes us.
      const woken = this.waitFor(organizationId);
      try {
        const page = await this.readCommitted((select) =>
          this.readOnce(select, organizationId, after, limit, readable),
        );
        const remaining = deadline - this.clock.nowMs();
        if (page.data.length > 0 || page.has_more || remaining <= 0 || this.closed) return page;
        after = BigInt(page.next_cursor);
        await woken.until(Math.min(remaining, POLL_MS));
        // Shutting down: answer what is known rather than read a closing database.
        if (this.closed) return { data: [], next_cursor: encodeFeedCursor(after), has_more: false };
        if (recheck) readable = readableBy(await recheck());
      } finally {
        woken.cancel();
      }
    }
  }

  /** Ends every waiting read (each answers what it has) and makes later ones answer at once. */
  stopWaiting(): void {
    this.closed = true;
    for (const waiters of this.waiting.values()) for (const wake of waiters) wake();
  }

  onModuleDestroy(): void {
    this.stopWaiting();
    this.subscriber?.disconnect();
  }

  /**
   * Runs a read that sees only committed changes. SQLite has one connection in this process, and
   * a read on it while a write transaction is open would see that transaction's positions before
   * its COMMIT (and they would be lost if it rolled back), so there the read takes its turn in the
   * write queue. PostgreSQL reads on a connection of their own, at READ COMMITTED.
   */
  private readCommitted<T>(read: (select: FeedSelect) => Promise<T>): Promise<T> {
    if (this.sql.dialect === 'postgres')
      return read((text, params) => this.sql.select(text, params));
    return this.transactions.run((manager: EntityManager) =>
      read((text, params) => this.sql.query(manager, text, params)),
    );
  }

  private async readOnce(
    select: FeedSelect,
    organizationId: string,
    after: bigint,
    limit: number,
    types: readonly EventType[],
  ): Promise<ChangePage> {
    const statements = (this.statements ??= feedReadStatements(this.sql));
    // The head first: every position up to it is committed (its row commits with them), so the
    // read below can move the cursor to it past changes of types this token does not read.
    const [headRow] = await select<{ position: string | number }>(statements.head, {
      organizationId,
    });
    const head = BigInt(headRow?.position ?? 0);
    if (after > head) throw badCursor("after is ahead of this organization's change feed");
    if (after === head) return { data: [], next_cursor: encodeFeedCursor(head), has_more: false };
    const [next] = await select<{ created_at: unknown }>(statements.at, {
      organizationId,
      position: Number(after + 1n),
    });
    if (!next || this.readDate(next.created_at).getTime() < this.clock.nowMs() - RETENTION_MS)
      throw new ProblemException(
        'cursor_expired',
        `The changes after this cursor are older than the ${EVENT_RETENTION_DAYS} days kept. Start again from an export (POST /v1/exports) and follow the feed from its cursor.`,
      );
    const rows =
      types.length === 0
        ? []
        : await select<FeedRow>(statements.after, {
            organizationId,
            after: Number(after),
            head: Number(head),
            types: [...types],
            limit: limit + 1,
          });
    const hasMore = rows.length > limit;
    const data = rows.slice(0, limit).map((row) =>
      toEventResource({
        id: row.id,
        type: row.type,
        data: row.data,
        previousAttributes: row.previous_attributes,
        createdAt: this.readDate(row.created_at),
        position: Number(row.position),
      }),
    );
    const nextCursor = hasMore ? String(data[data.length - 1]!.position) : encodeFeedCursor(head);
    return { data, next_cursor: nextCursor, has_more: hasMore };
  }

  private readDate(value: unknown): Date {
    return this.sql.read(EventRecord, 'createdAt', value) as Date;
  }

  /** A wake-up for the next change of `organizationId`: `until(ms)` resolves on it or after ms. */
  private waitFor(organizationId: string) {
    let wake!: () => void;
    const woken = new Promise<void>((resolve) => (wake = resolve));
    let waiters = this.waiting.get(organizationId);
    if (!waiters) this.waiting.set(organizationId, (waiters = new Set()));
    waiters.add(wake);
    let timer: NodeJS.Timeout | undefined;
    return {
      until: (ms: number) =>
        Promise.race([woken, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]),
      cancel: () => {
        clearTimeout(timer);
        waiters.delete(wake);
        if (waiters.size === 0 && this.waiting.get(organizationId) === waiters)
          this.waiting.delete(organizationId);
      },
    };
  }

  private wake(organizationId: string): void {
    const waiters = this.waiting.get(organizationId);
    if (!waiters) return;
    for (const wake of waiters) wake();
  }

  /** Other instances' changes, from Redis pub/sub on a connection of its own. */
  private listen(redis: Redis): void {
    // Its SUBSCRIBE waits for the connection (the shared client fails commands at once instead),
    // and ioredis subscribes again after a reconnect.
    const subscriber = redis.duplicate({
      enableOfflineQueue: true,
      connectionName: 'platform-feed',
    });
    this.subscriber = subscriber;
    let lastLogged = 0;
    subscriber.on('error', (error: Error) => {
      if (Date.now() - lastLogged > 10_000) {
        lastLogged = Date.now();
        this.logger.warn({ error: error.message }, 'feed notices unavailable; waiting reads poll');
      }
    });
    subscriber.on('message', (_channel: string, organizationId: string) =>
      this.wake(organizationId),
    );
    subscriber.subscribe(CHANNEL).catch((error: unknown) => {
      // Waiting reads still poll; they just see other instances' changes up to POLL_MS later.
      this.logger.warn({ error: (error as Error).message }, 'could not subscribe to feed notices');
    });
  }
}

function badCursor(message: string): ProblemException {
  return new ProblemException('validation_error', message, {
    errors: [{ path: 'query.after', message, code: 'invalid_cursor' }],
  });
}

function feedReadStatements(sql: Sql) {
  const heads = sql.table(FeedHead);
  const events = sql.table(EventRecord);
  const [id, organizationId, type, data, previousAttributes, createdAt, position] = (
    ['id', 'organizationId', 'type', 'data', 'previousAttributes', 'createdAt', 'position'] as const
  ).map((property) => sql.column(EventRecord, property));
  return {
    head: `SELECT ${sql.column(FeedHead, 'position')} AS position FROM ${heads}
      WHERE ${sql.column(FeedHead, 'organizationId')} = :organizationId`,
    at: `SELECT ${createdAt} AS created_at FROM ${events}
      WHERE ${organizationId} = :organizationId AND ${position} = :position`,
    after: `SELECT ${id} AS id, ${type} AS type, ${data} AS data,
        ${previousAttributes} AS previous_attributes, ${createdAt} AS created_at,
        ${position} AS position
      FROM ${events}
      WHERE ${organizationId} = :organizationId AND ${position} > :after AND ${position} <= :head
        AND ${type} IN (:...types)
      ORDER BY ${position} LIMIT :limit`,
  };
}
