import { Inject, Injectable, Logger } from '@nestjs/common';
import type { EventType } from '@platform/contract';
import type { EntityManager } from 'typeorm';
import { Clock } from '../common/clock';
import { newId } from '../common/ids';
import { insertRows } from '../database/write-rows';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig, WebhookConfig } from '../config/env';
import { Sql } from '../database/sql';
import { EventsService } from '../events/events.service';
import type { ClaimLimits } from './delivery-admission';
import { type ChainedEndpoint, chainDeliveries } from './delivery-chain';
import { afterAttempt, isSuccess, type MessageUpdate } from './delivery-outcome';
import { type DeliveryStatements, deliveryStatements } from './delivery-statements';
import type { ClaimedMessage, CompletedAttempt, Disabled } from './delivery-types';
import { memberReadableTypes, ownerEnded } from '../auth/member-owned';
import { WebhookAttemptRecord } from './webhook-attempt.entity';
import { WebhookEndpointRecord } from './webhook-endpoint.entity';
import { WebhookMessageRecord } from './webhook-message.entity';

export interface DeliveryPolicy {
  retryScheduleMs: readonly number[];
  disableAfterMs: number;
  /** How long a claimed message stays leased: the attempt's timeout plus a margin. */
  leaseMs: number;
}

/** Margin on top of the attempt timeout before a claimed message's lease runs out. */
const LEASE_MARGIN_MS = 2000;

export function deliveryPolicy(config: WebhookConfig): DeliveryPolicy {
  return {
    retryScheduleMs: config.retryScheduleMs,
    disableAfterMs: config.disableAfterMs,
    leaseMs: config.timeoutMs + LEASE_MARGIN_MS,
  };
}

const FANOUT_BATCH = 500;
/**
 * Events of one organization in one fan-out batch: a tenant's bulk import of thousands of events
 * is fanned out over several batches, and each batch also takes every other tenant's events.
 */
const FANOUT_SHARE = 100;
/**
 * Reads in one claim. A read past the window's oldest rows happens only when an organization or
 * endpoint filled its room in the previous read; it then reads again without them.
 */
const CLAIM_READS = 4;

const logger = new Logger('Webhooks');

/**
 * The dispatcher's SQL, owned by the webhooks module: its three tables, and what it takes from
 * the outbox through `EventsService`. Every statement is fixed text so both drivers cache it;
 * on PostgreSQL the reads that pick work lock with SKIP LOCKED, so several instances never take
 * the same row.
 */
@Injectable()
export class DeliveryStore {
  private readonly policy: DeliveryPolicy;
  private statements: DeliveryStatements | undefined;

  constructor(
    private readonly sql: Sql,
    private readonly events: EventsService,
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly clock: Clock,
  ) {
    this.policy = deliveryPolicy(config.webhooks);
  }

  /** Built on first use: the entities' metadata is complete once the data source is up. */
  private get statement(): DeliveryStatements {
    return (this.statements ??= deliveryStatements(this.sql));
  }

  /** A date as the driver stores it (SQLite: UTC text that sorts; PostgreSQL: timestamptz). */
  private date(value: Date): unknown {
    return this.sql.bind(WebhookMessageRecord, 'nextAttemptAt', value);
  }

  private readDate(value: unknown): Date {
    return this.sql.read(WebhookMessageRecord, 'nextAttemptAt', value) as Date;
  }

  /** `true`/`false` as the driver binds a boolean column (1/0 on SQLite). */
  private flag(value: boolean): unknown {
    return this.sql.bind(WebhookEndpointRecord, 'enabled', value);
  }

  /**
   * Turns up to a batch of committed events into messages, one per enabled endpoint of the
   * organization that subscribes to the type, in the caller's transaction (the events module
   * marks them fanned out in the same one). Oldest first, but at most FANOUT_SHARE per
   * organization. Returns how many events it handled (any means there may be more).
   */
  async fanOut(manager: EntityManager, now: Date): Promise<number> {
    const events = await this.events.claimPendingFanOut(manager, {
      limit: FANOUT_BATCH,
      perOrganization: FANOUT_SHARE,
      reads: CLAIM_READS,
    });
    if (events.length === 0) return 0;
    const rows = await this.sql.query<
      { id: string; organization_id: string; events: string } & Record<string, unknown>
    >(manager, this.statement.subscribers, {
      enabled: this.flag(true),
      organizations: [...new Set(events.map((e) => e.organizationId))],
    });
    const endpoints = await this.withoutEndedOwners(manager, rows, (row) => row.id, now);
    const byOrganization = new Map<string, ChainedEndpoint[]>();
    for (const endpoint of endpoints) {
      const list = byOrganization.get(endpoint.organization_id) ?? [];
      list.push({
        id: endpoint.id,
        types: new Set(JSON.parse(endpoint.events) as string[]),
        // An endpoint of a member delivers only what their role may read now (a demotion).
        readable: memberReadableTypes(endpoint),
        chainStart: Number(endpoint.chain_start ?? 0),
      });
      byOrganization.set(endpoint.organization_id, list);
    }
    const links = await chainDeliveries(
      events,
      (organizationId) => byOrganization.get(organizationId) ?? [],
      (organizationId, types, before, after) =>
        this.previousChange(manager, organizationId, types, before, after),
    );
    const messages = links.map(({ event, endpointId, previousPosition }) =>
      newMessage(event.organizationId, endpointId, event.id, event.type, now, previousPosition),
    );
    if (messages.length > 0) await insertRows(manager, WebhookMessageRecord, messages);
    return events.length;
  }

  private async previousChange(
    manager: EntityManager,
    organizationId: string,
    types: readonly string[],
    before: number,
    after: number,
  ): Promise<number | null> {
    const [row] = await this.sql.query<{ position: string | number | null }>(
      manager,
      this.statement.previousChange,
      { organizationId, types: [...types], before, after },
    );
    return row?.position == null ? null : Number(row.position);
  }

  /**
   * Leases due messages of enabled endpoints, oldest first, within `limits`. The lease is the
   * message's `next_attempt_at` moved past the attempt's timeout, so a crash leaves nothing
   * stuck: the lease runs out and the message is due again.
   *
   * Fairness: an organization or endpoint that fills its room is left out of the next read, so
   * one tenant's backlog, however old and large, cannot keep another tenant's due message out of
   * the claim. `more` says whether due messages may be left (the last read filled its window);
   * `full`, who was found at their limit.
   */
  async claim(
    manager: EntityManager,
    now: Date,
    limits: ClaimLimits,
  ): Promise<{
    claimed: ClaimedMessage[];
    more: boolean;
    full: { organizations: string[]; endpoints: string[] };
  }> {
    const fullOrganizations = new Set(limits.fullOrganizations);
    const fullEndpoints = new Set(limits.fullEndpoints);
    const claimed: ClaimedMessage[] = [];
    let more = false;
    for (let read = 0; read < CLAIM_READS && claimed.length < limits.limit; read += 1) {
      // Read past the room: rows of organizations and endpoints that fill theirs are skipped.
      const window = (limits.limit - claimed.length) * 2;
      const due = await this.due(manager, now, window, fullOrganizations, fullEndpoints);
      // Messages of an endpoint whose owner credential ended are not sent (the endpoint is
      // disabled here); they still count towards `more`.
      const rows = await this.withoutEndedOwners(
        manager,
        due,
        (row) => row.endpoint_id as string,
        now,
      );
      const decision = await limits.admit(
        rows.map((row) => this.toClaimed(row)),
        limits.limit - claimed.length,
      );
      await this.lease(manager, now, decision.admitted);
      claimed.push(...decision.admitted);
      for (const id of decision.fullOrganizations) fullOrganizations.add(id);
      for (const id of decision.fullEndpoints) fullEndpoints.add(id);
      more = due.length === window;
      // Nobody was found full: a next read would see only what this one did.
      if (!more || decision.fullOrganizations.length + decision.fullEndpoints.length === 0) break;
    }
    return {
      claimed,
      more,
      full: { organizations: [...fullOrganizations], endpoints: [...fullEndpoints] },
    };
  }

  private due(
    manager: EntityManager,
    now: Date,
    window: number,
    fullOrganizations: ReadonlySet<string>,
    fullEndpoints: ReadonlySet<string>,
  ): Promise<Record<string, unknown>[]> {
    const params = { now: this.date(now), enabled: this.flag(true), window };
    const statements = this.statement.due;
    if (fullOrganizations.size && fullEndpoints.size) {
      return this.sql.query(manager, statements.exceptBoth, {
        ...params,
        fullOrganizations: [...fullOrganizations],
        fullEndpoints: [...fullEndpoints],
      });
    }
    if (fullOrganizations.size) {
      return this.sql.query(manager, statements.exceptOrganizations, {
        ...params,
        fullOrganizations: [...fullOrganizations],
      });
    }
    if (fullEndpoints.size) {
      return this.sql.query(manager, statements.exceptEndpoints, {
        ...params,
        fullEndpoints: [...fullEndpoints],
      });
    }
    return this.sql.query(manager, statements.all, params);
  }

  private async lease(manager: EntityManager, now: Date, claimed: ClaimedMessage[]): Promise<void> {
    if (claimed.length === 0) return;
    await this.sql.query(manager, this.statement.lease, {
      until: this.date(new Date(now.getTime() + this.policy.leaseMs)),
      ids: claimed.map((message) => message.id),
    });
  }

  /**
   * Queued messages as a worker picks them up, in one read: those still pending, of an endpoint
   * still enabled, and not attempted since they were queued (`attempts`, the count the job
   * carries, where known); the others were delivered, retried, deleted or disabled meanwhile, so
   * there is nothing to do for them.
   */
  async load(
    manager: EntityManager,
    queued: readonly { id: string; attempts?: number }[],
  ): Promise<ClaimedMessage[]> {
    if (queued.length === 0) return [];
    const rows = await this.sql.query(manager, this.statement.load, {
      ids: queued.map((q) => q.id),
      enabled: this.flag(true),
    });
    const live = await this.withoutEndedOwners(
      manager,
      rows,
      (r) => r.endpoint_id as string,
      this.clock.now(),
    );
    const expected = new Map(queued.map((q) => [q.id, q.attempts]));
    return live
      .map((row) => this.toClaimed(row))
      .filter((message) => {
        const attempts = expected.get(message.id);
        return attempts === undefined || attempts === message.attemptCount;
      });
  }

  /**
   * Delegation: an endpoint lives only as long as the credential it is bound to. Rows whose
   * endpoint's owner was revoked, deleted or has expired are dropped, and those endpoints are
   * disabled with the reason, so nothing more is sent to them. Checked here, where every
   * delivery is made, because expiry has no moment of its own at which to act, and any way a
   * credential ends (API, CLI, OAuth revocation, grant reuse) is covered without a hook in each.
   */
  private async withoutEndedOwners<R extends Record<string, unknown>>(
    manager: EntityManager,
    rows: R[],
    endpointOf: (row: R) => string,
    now: Date,
  ): Promise<R[]> {
    const ended = new Map<string, { reason: string; row: R }>();
    const live = rows.filter((row) => {
      const id = endpointOf(row);
      const reason = ended.get(id)?.reason ?? ownerEnded(row, now, (v) => this.readDate(v));
      if (reason) ended.set(id, { reason, row });
      return !reason;
    });
    for (const [id, { reason, row }] of ended) {
      await this.sql.query(manager, this.statement.disableOwnerEnded, {
        disabled: this.flag(false),
        reason,
        now: this.date(now),
        id,
        enabled: this.flag(true),
        ownerType: row.owner_type ?? '',
        ownerId: row.owner_id ?? '',
        ownerGrantId: row.owner_grant_id ?? '',
        ownerUserId: row.owner_user_id ?? '',
      });
      logger.warn(`Disabled webhook endpoint ${id}: its owner ended (${reason})`);
    }
    return live;
  }

  private toClaimed(row: Record<string, unknown>): ClaimedMessage {
    return {
      id: row.id as string,
      organizationId: row.organization_id as string,
      endpointId: row.endpoint_id as string,
      url: row.url as string,
      sealedSecret: row.secret as string,
      sealedPreviousSecret: (row.previous_secret as string | null) ?? null,
      previousSecretExpiresAt:
        row.previous_secret_expires_at == null
          ? null
          : this.readDate(row.previous_secret_expires_at),
      eventId: row.event_id as string,
      eventType: row.event_type as EventType,
      eventCreatedAt: this.readDate(row.event_created_at),
      eventData: row.event_data as string,
      eventPreviousAttributes: (row.event_previous_attributes as string | null) ?? null,
      eventPosition: row.event_position == null ? null : Number(row.event_position),
      previousPosition: row.previous_position == null ? null : Number(row.previous_position),
      attemptCount: Number(row.attempt_count),
    };
  }

  /**
   * Writes finished attempts and what follows from them: the message's new state and next
   * attempt, and the endpoint's failure streak, disabling it after a 410 or 5 days of failures.
   * Returns the endpoints disabled and the earliest retry scheduled.
   */
  async record(
    manager: EntityManager,
    completed: readonly CompletedAttempt[],
    now: Date,
  ): Promise<{ disabled: Disabled[]; nextRetryAt: Date | null }> {
    if (completed.length === 0) return { disabled: [], nextRetryAt: null };
    // A message already deleted with its endpoint is skipped.
    const rows = await this.sql.query<{ id: string; attempt_count: number; retries_used: number }>(
      manager,
      this.statement.attemptState,
      { ids: [...new Set(completed.map((c) => c.messageId))] },
    );
    const state = new Map(
      rows.map((r) => [
        r.id,
        { attempts: Number(r.attempt_count), retriesUsed: Number(r.retries_used) },
      ]),
    );
    const attempts: WebhookAttemptRecord[] = [];
    const updates = new Map<string, MessageUpdate>();
    const succeeded = new Set<string>();
    const failed = new Set<string>();
    const gone = new Set<string>();
    let nextRetryAt: Date | null = null;

    for (const { messageId, endpointId, attemptedAt, result, requestHeaders } of completed) {
      const current = state.get(messageId);
      if (!current) continue;
      current.attempts += 1;
      attempts.push({
        messageId,
        number: current.attempts,
        attemptedAt,
        statusCode: result.statusCode,
        latencyMs: result.latencyMs,
        responseBody: result.responseBody,
        error: result.error,
        requestHeaders: requestHeaders ?? null,
      });
      if (isSuccess(result)) succeeded.add(endpointId);
      else failed.add(endpointId);
      if (result.statusCode === 410) gone.add(endpointId);
      const update = afterAttempt(current, result, now, this.policy.retryScheduleMs);
      updates.set(messageId, update);
      if (update.status === 'pending' && update.next && (!nextRetryAt || update.next < nextRetryAt))
        nextRetryAt = update.next;
    }

    if (attempts.length > 0) await insertRows(manager, WebhookAttemptRecord, attempts);
    await this.updateMessages(manager, updates, now);
    return {
      disabled: await this.updateEndpoints(manager, succeeded, failed, gone, now),
      nextRetryAt,
    };
  }

  /** Messages' new states, those ending in the same state in one statement. */
  private async updateMessages(
    manager: EntityManager,
    updates: ReadonlyMap<string, MessageUpdate>,
    now: Date,
  ): Promise<void> {
    const groups = new Map<string, { update: MessageUpdate; ids: string[] }>();
    for (const [id, u] of updates) {
      const key = `${u.status}|${u.attempts}|${u.retriesUsed}|${u.next?.getTime() ?? ''}`;
      const group = groups.get(key);
      if (group) group.ids.push(id);
      else groups.set(key, { update: u, ids: [id] });
    }
    for (const { update: u, ids } of groups.values()) {
      await this.sql.query(manager, this.statement.updateMessages, {
        status: u.status,
        attempts: u.attempts,
        retriesUsed: u.retriesUsed,
        next: u.next && this.date(u.next),
        now: this.date(now),
        ids,
      });
    }
  }

  /** The failure streak of each endpoint touched, and the disabling it may lead to. */
  private async updateEndpoints(
    manager: EntityManager,
    succeeded: Set<string>,
    failed: Set<string>,
    gone: Set<string>,
    now: Date,
  ): Promise<Disabled[]> {
    const stamp = this.date(now);
    if (succeeded.size > 0) {
      await this.sql.query(manager, this.statement.succeeded, { ids: [...succeeded] });
    }
    // An endpoint that also succeeded in this batch is not failing everything.
    const failing = [...failed].filter((id) => !succeeded.has(id));
    const disabled: Disabled[] = [];
    if (failing.length > 0) {
      await this.sql.query(manager, this.statement.failing, { now: stamp, ids: failing });
      const since = await this.sql.query<{ id: string }>(manager, this.statement.failingTooLong, {
        ids: failing,
        enabled: this.flag(true),
        threshold: this.date(new Date(now.getTime() - this.policy.disableAfterMs)),
      });
      for (const { id } of since)
        if (!gone.has(id)) disabled.push({ endpointId: id, reason: 'failing' });
    }
    for (const id of gone) disabled.push({ endpointId: id, reason: 'gone' });
    for (const { endpointId, reason } of disabled) {
      await this.sql.query(manager, this.statement.disable, {
        disabled: this.flag(false),
        reason,
        now: stamp,
        id: endpointId,
        enabled: this.flag(true),
      });
    }
    return disabled;
  }
}

export function newMessage(
  organizationId: string,
  endpointId: string,
  eventId: string,
  eventType: EventType,
  now: Date,
  previousPosition: number | null = null,
): WebhookMessageRecord {
  return {
    id: newId('webhook_message', now.getTime()),
    organizationId,
    endpointId,
    eventId,
    eventType,
    previousPosition,
    status: 'pending',
    attemptCount: 0,
    retriesUsed: 0,
    nextAttemptAt: now,
    createdAt: now,
    updatedAt: now,
  };
}
