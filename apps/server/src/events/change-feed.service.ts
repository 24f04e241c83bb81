import { Inject, Injectable, Logger, type OnModuleDestroy, Optional } from '@nestjs/common';
import {
  type ChangePage,
  type ChangesQuery,
  EVENT_READ_SCOPES,
  EVENT_RETENTION_DAYS,
  type EventType,
  FEED_LIMITS,
  OLDEST_CURSOR,
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
import { decodeFeedCursor, encodeFeedCursor } from './feed-cursor';

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
    const until =
      query.until === undefined ? undefined : cursorOf(organizationId, query.until, 'query.until');
    const limit = query.limit ?? FEED_LIMITS.defaultLimit;
    refuseUnreadableTypes(principal, query.type);
    // A `ping` is no change (it has no position); the others as every read of an event.
    const readableBy = (caller: Principal) =>
      readableEventTypes(caller.scopes).filter(
        (type) =>
          type !== 'ping' && (!query.type || (query.type as readonly string[]).includes(type)),
      );
    let readable = readableBy(principal);
    const deadline = this.clock.nowMs() + (query.wait ?? 0) * 1000;
    const fromOldest = query.after === OLDEST_CURSOR;
    const start = fromOldest
      ? await this.readCommitted((select) => this.beforeOldestKept(select, organizationId))
      : cursorOf(organizationId, query.after ?? '0', 'query.after');
    let after: bigint = start;
    if (until !== undefined && until < after)
      throw badCursor('until is before after: nothing lies between them', 'query.until');
    for (;;) {
      // Registered before reading, so a change that commits during the read still wakes us.
      const woken = this.waitFor(organizationId);
      try {
        const window = { after, until, checkExpiry: !fromOldest };
        const page: ChangePage = await this.readCommitted((select) =>
          this.readOnce(select, organizationId, window, limit, readable),
        );
        const remaining = deadline - this.clock.nowMs();
        const atUntil =
          until !== undefined && page.next_cursor === encodeFeedCursor(organizationId, until);
        if (page.data.length > 0 || page.has_more || remaining <= 0 || this.closed || atUntil)
          return page;
        after = cursorOf(organizationId, page.next_cursor, 'query.after');
        await woken.until(Math.min(remaining, POLL_MS));
        // Shutting down: answer what is known rather than read a closing database.
        if (this.closed)
          return {
            data: [],
            next_cursor: encodeFeedCursor(organizationId, after),
            has_more: false,
          };
        if (recheck) readable = readableBy(await recheck());
      } finally {
        woken.cancel();
      }
    }
  }

  /**
   * The cursor just before the oldest change still kept (`after=oldest`): the head when every
   * change is older than the retention, so the read waits for the next one.
   */
  private async beforeOldestKept(select: FeedSelect, organizationId: string): Promise<bigint> {
    const statements = (this.statements ??= feedReadStatements(this.sql));
    const cutoff = new Date(this.clock.nowMs() - RETENTION_MS);
    const [oldest] = await select<{ position: string | number | null }>(statements.oldest, {
      organizationId,
      cutoff: this.sql.bind(EventRecord, 'createdAt', cutoff),
    });
    if (oldest?.position !== null && oldest?.position !== undefined)
      return BigInt(oldest.position) - 1n;
    const [headRow] = await select<{ position: string | number }>(statements.head, {
      organizationId,
    });
    return BigInt(headRow?.position ?? 0);
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
    window: { after: bigint; until: bigint | undefined; checkExpiry: boolean },
    limit: number,
    types: readonly EventType[],
  ): Promise<ChangePage> {
    const statements = (this.statements ??= feedReadStatements(this.sql));
    const { after, until } = window;
    // The head first: every position up to it is committed (its row commits with them), so the
    // read below can move the cursor to it past changes of types this token does not read.
    const [headRow] = await select<{ position: string | number }>(statements.head, {
      organizationId,
    });
    const head = BigInt(headRow?.position ?? 0);
    if (after > head) throw badCursor("after is ahead of this organization's change feed");
    if (until !== undefined && until > head)
      throw badCursor("until is ahead of this organization's change feed", 'query.until');
    const end = until ?? head;
    if (after === end)
      return { data: [], next_cursor: encodeFeedCursor(organizationId, end), has_more: false };
    if (window.checkExpiry) await this.refuseExpired(select, organizationId, after);
    const rows =
      types.length === 0
        ? []
        : await select<FeedRow>(statements.after, {
            organizationId,
            after: Number(after),
            head: Number(end),
            types: [...types],
            limit: limit + 1,
          });
    const hasMore = rows.length > limit;
    const data = rows.slice(0, limit).map((row) =>
      toEventResource({
        organizationId,
        id: row.id,
        type: row.type,
        data: row.data,
        previousAttributes: row.previous_attributes,
        createdAt: this.readDate(row.created_at),
        position: Number(row.position),
      }),
    );
    const nextCursor = hasMore
      ? data[data.length - 1]!.cursor!
      : encodeFeedCursor(organizationId, end);
    return { data, next_cursor: nextCursor, has_more: hasMore };
  }

  /** A 410 when the change after `after` is gone or older than the retention. */
  private async refuseExpired(select: FeedSelect, organizationId: string, after: bigint) {
    const statements = (this.statements ??= feedReadStatements(this.sql));
    const [next] = await select<{ created_at: unknown }>(statements.at, {
      organizationId,
      position: Number(after + 1n),
    });
    if (!next || this.readDate(next.created_at).getTime() < this.clock.nowMs() - RETENTION_MS)
      throw new ProblemException(
        'cursor_expired',
        `The changes after this cursor are older than the ${EVENT_RETENTION_DAYS} days kept. Start again from an export (POST /v1/exports) and follow the feed from its cursor.`,
      );
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

/** The position a cursor of this organization names, or a 400 naming the parameter. */
function cursorOf(organizationId: string, cursor: string, path: string): bigint {
  const position = decodeFeedCursor(organizationId, cursor);
  if (position !== undefined) return position;
  throw badCursor(
    `${path.slice('query.'.length)} is not a cursor of this organization's change feed`,
    path,
  );
}

function badCursor(message: string, path = 'query.after'): ProblemException {
  return new ProblemException('validation_error', message, {
    errors: [{ path, message, code: 'invalid_cursor' }],
  });
}

/**
 * A `type` filter naming a type the token may not read is a 403 naming the scope it needs,
 * rather than a feed that silently never carries it.
 */
function refuseUnreadableTypes(principal: Principal, types: readonly string[] | undefined) {
  const readable = new Set<string>(readableEventTypes(principal.scopes));
  const refused = (types ?? []).filter((type) => !readable.has(type));
  if (refused.length === 0) return;
  const scopes = [...new Set(refused.map((type) => EVENT_READ_SCOPES[type as EventType]))];
  throw new ProblemException(
    'insufficient_scope',
    `This token may not read ${refused.join(', ')} (type): that needs ${scopes.join(', ')}`,
    {
      headers: {
        'WWW-Authenticate': `Bearer realm="platform", error="insufficient_scope", scope="${scopes.join(' ')}"`,
      },
    },
  );
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
    oldest: `SELECT MIN(${position}) AS position FROM ${events}
      WHERE ${organizationId} = :organizationId AND ${createdAt} >= :cutoff
        AND ${position} IS NOT NULL`,
    after: `SELECT ${id} AS id, ${type} AS type, ${data} AS data,
        ${previousAttributes} AS previous_attributes, ${createdAt} AS created_at,
        ${position} AS position
      FROM ${events}
      WHERE ${organizationId} = :organizationId AND ${position} > :after AND ${position} <= :head
        AND ${type} IN (:...types)
      ORDER BY ${position} LIMIT :limit`,
  };
}
