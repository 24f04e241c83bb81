import { Logger } from '@nestjs/common';
import type { EventType } from '@platform/contract';
import type { EntityManager } from 'typeorm';
import { newId } from '../common/ids';
import { type Dialect, insertRows, SqlParams } from '../common/sql';
import { OWNER_JOIN, OWNER_SELECT, ownerEnded } from './endpoint-owner';
import type { AttemptResult } from './sender';
import { WebhookAttemptRecord } from './webhook-attempt.entity';
import { WebhookMessageRecord } from './webhook-message.entity';

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
}

/** One finished attempt, waiting to be written. */
export interface CompletedAttempt {
  messageId: string;
  endpointId: string;
  attemptedAt: Date;
  result: AttemptResult;
}

export interface DeliveryPolicy {
  retryScheduleMs: readonly number[];
  disableAfterMs: number;
  /** How long a claimed message stays leased: the attempt's timeout plus a margin. */
  leaseMs: number;
}

/** Which of a read's candidates may go now, and whose limits the others ran into. */
export interface Admitted {
  admitted: ClaimedMessage[];
  fullOrganizations: string[];
  fullEndpoints: string[];
}

/**
 * How much a claim may take: `limit` in all, and what `admit` lets through per organization and
 * per endpoint (the dispatcher's slots). Organizations and endpoints known to be at their limit
 * are named, so their rows are not even read: a backlog of theirs cannot fill the window in
 * which the others' due messages are read.
 */
export interface ClaimLimits {
  limit: number;
  fullOrganizations: readonly string[];
  fullEndpoints: readonly string[];
  /** Takes, oldest first and at most `max`, the candidates whose organization and endpoint have room. */
  admit: (candidates: ClaimedMessage[], max: number) => Admitted | Promise<Admitted>;
}

/**
 * An admission that counts in memory what it lets through against each organization's and
 * endpoint's room (the embedded dispatcher's slots in this process).
 */
export function admitWithin(
  organizationRoom: (organizationId: string) => number,
  endpointRoom: (endpointId: string) => number,
): ClaimLimits['admit'] {
  const byOrganization = new Map<string, number>();
  const byEndpoint = new Map<string, number>();
  return (candidates, max) => {
    const decision: Admitted = { admitted: [], fullOrganizations: [], fullEndpoints: [] };
    for (const message of candidates) {
      if (decision.admitted.length >= max) break;
      const ofOrganization = byOrganization.get(message.organizationId) ?? 0;
      const ofEndpoint = byEndpoint.get(message.endpointId) ?? 0;
      if (ofOrganization >= organizationRoom(message.organizationId)) {
        decision.fullOrganizations.push(message.organizationId);
      } else if (ofEndpoint >= endpointRoom(message.endpointId)) {
        decision.fullEndpoints.push(message.endpointId);
      } else {
        byOrganization.set(message.organizationId, ofOrganization + 1);
        byEndpoint.set(message.endpointId, ofEndpoint + 1);
        decision.admitted.push(message);
      }
    }
    return decision;
  };
}

/** Endpoints the dispatcher disabled while recording, for its log. */
export interface Disabled {
  endpointId: string;
  reason: 'gone' | 'failing';
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

/** A message with its endpoint, its event and the endpoint's owner: what an attempt needs. */
const CLAIM_SELECT = `SELECT m.id, m.organization_id, m.endpoint_id, m.event_id, m.event_type,
              e.url, e.secret, e.previous_secret, e.previous_secret_expires_at,
              ev.data AS event_data, ev.created_at AS event_created_at, ${OWNER_SELECT}
       FROM webhook_messages m
       JOIN webhook_endpoints e ON e.id = m.endpoint_id
       JOIN events ev ON ev.id = m.event_id
       ${OWNER_JOIN}`;
/** Retry-After is honoured up to a day; beyond that the schedule decides. */
const MAX_RETRY_AFTER_MS = 86_400_000;

function isSuccess(result: AttemptResult): boolean {
  return result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300;
}

/** ±10 %, so endpoints that failed together are not retried in lockstep. */
function withJitter(ms: number): number {
  return Math.round(ms * (0.9 + Math.random() * 0.2));
}

/**
 * The dispatcher's SQL. Every statement is fixed text so both drivers cache it; on PostgreSQL
 * the reads that pick work lock with SKIP LOCKED, so several instances never take the same row.
 */
export class DeliveryStore {
  constructor(
    private readonly dialect: Dialect,
    private readonly policy: DeliveryPolicy,
  ) {}

  private get yes(): string {
    return this.dialect === 'postgres' ? 'TRUE' : '1';
  }

  private get no(): string {
    return this.dialect === 'postgres' ? 'FALSE' : '0';
  }

  private skipLocked(of?: string): string {
    return this.dialect === 'postgres' ? ` FOR UPDATE${of ? ` OF ${of}` : ''} SKIP LOCKED` : '';
  }

  /** Dates as the driver stores them (SQLite: UTC text that sorts; PostgreSQL: timestamptz). */
  private date(manager: EntityManager, value: Date): unknown {
    const column = manager.connection
      .getMetadata(WebhookMessageRecord)
      .findColumnWithPropertyName('nextAttemptAt');
    return manager.connection.driver.preparePersistentValue(value, column!);
  }

  private readDate(manager: EntityManager, value: unknown): Date {
    const column = manager.connection
      .getMetadata(WebhookMessageRecord)
      .findColumnWithPropertyName('nextAttemptAt');
    return manager.connection.driver.prepareHydratedValue(value, column!) as Date;
  }

  /**
   * Turns up to a batch of committed events into messages, one per enabled endpoint of the
   * organization that subscribes to the type, and marks them done, in the caller's transaction.
   * Oldest first, but at most FANOUT_SHARE per organization. Returns how many events it handled
   * (any means there may be more).
   */
  async fanOut(manager: EntityManager, now: Date): Promise<number> {
    type PendingEvent = { id: string; organization_id: string; type: EventType };
    const events: PendingEvent[] = [];
    const perOrganization = new Map<string, number>();
    const full = new Set<string>();
    for (let read = 0; read < CLAIM_READS && events.length < FANOUT_BATCH; read += 1) {
      const params = new SqlParams(this.dialect);
      const skip = full.size
        ? ` AND organization_id NOT IN (${[...full].map((id) => params.add(id)).join(', ')})`
        : '';
      const window = FANOUT_BATCH - events.length;
      const rows: PendingEvent[] = await manager.query(
        `SELECT id, organization_id, type FROM events WHERE fanout_pending = ${this.yes}${skip}
         ORDER BY created_at, id LIMIT ${window}${this.skipLocked()}`,
        params.values,
      );
      let filled = false;
      for (const row of rows) {
        const n = perOrganization.get(row.organization_id) ?? 0;
        if (n >= FANOUT_SHARE) {
          filled ||= !full.has(row.organization_id);
          full.add(row.organization_id);
          continue;
        }
        perOrganization.set(row.organization_id, n + 1);
        events.push(row);
      }
      // Read again only past an organization that filled its share in a full window.
      if (rows.length < window || !filled) break;
    }
    if (events.length === 0) return 0;
    const organizations = [...new Set(events.map((e) => e.organization_id))];
    const params = new SqlParams(this.dialect);
    const rows: ({ id: string; organization_id: string; events: string } & Record<
      string,
      unknown
    >)[] = await manager.query(
      `SELECT e.id, e.organization_id, e.events, ${OWNER_SELECT} FROM webhook_endpoints e ${OWNER_JOIN}
         WHERE e.enabled = ${this.yes} AND e.organization_id IN (${organizations.map((o) => params.add(o)).join(', ')})`,
      params.values,
    );
    const endpoints = await this.withoutEndedOwners(manager, rows, (row) => row.id, now);
    const byOrganization = new Map<string, { id: string; types: Set<string> }[]>();
    for (const endpoint of endpoints) {
      const list = byOrganization.get(endpoint.organization_id) ?? [];
      list.push({ id: endpoint.id, types: new Set(JSON.parse(endpoint.events) as string[]) });
      byOrganization.set(endpoint.organization_id, list);
    }
    const messages: WebhookMessageRecord[] = [];
    for (const event of events) {
      for (const endpoint of byOrganization.get(event.organization_id) ?? []) {
        if (!endpoint.types.has('*') && !endpoint.types.has(event.type)) continue;
        messages.push(newMessage(event.organization_id, endpoint.id, event.id, event.type, now));
      }
    }
    if (messages.length > 0) await insertRows(manager, WebhookMessageRecord, messages);
    const done = new SqlParams(this.dialect);
    await manager.query(
      `UPDATE events SET fanout_pending = ${this.no} WHERE id IN (${events.map((e) => done.add(e.id)).join(', ')})`,
      done.values,
    );
    return events.length;
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
        rows.map((row) => this.toClaimed(manager, row)),
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

  private async due(
    manager: EntityManager,
    now: Date,
    window: number,
    fullOrganizations: ReadonlySet<string>,
    fullEndpoints: ReadonlySet<string>,
  ): Promise<Record<string, unknown>[]> {
    const params = new SqlParams(this.dialect);
    const due = params.add(this.date(manager, now));
    const notIn = (column: string, ids: ReadonlySet<string>) =>
      ids.size ? ` AND ${column} NOT IN (${[...ids].map((id) => params.add(id)).join(', ')})` : '';
    const organizations = notIn('m.organization_id', fullOrganizations);
    const endpoints = notIn('m.endpoint_id', fullEndpoints);
    return manager.query(
      `${CLAIM_SELECT}
       WHERE m.status = 'pending' AND m.next_attempt_at <= ${due} AND e.enabled = ${this.yes}${organizations}${endpoints}
       ORDER BY m.next_attempt_at LIMIT ${window}${this.skipLocked('m')}`,
      params.values,
    );
  }

  private async lease(manager: EntityManager, now: Date, claimed: ClaimedMessage[]): Promise<void> {
    if (claimed.length === 0) return;
    const lease = new SqlParams(this.dialect);
    const until = lease.add(this.date(manager, new Date(now.getTime() + this.policy.leaseMs)));
    await manager.query(
      `UPDATE webhook_messages SET next_attempt_at = ${until}
       WHERE id IN (${claimed.map((m) => lease.add(m.id)).join(', ')})`,
      lease.values,
    );
  }

  /**
   * A queued message as a worker picks it up: still pending, its endpoint still enabled;
   * otherwise null (it was delivered, deleted or disabled meanwhile, so there is nothing to do).
   */
  async load(manager: EntityManager, id: string): Promise<ClaimedMessage | null> {
    const params = new SqlParams(this.dialect);
    const rows: Record<string, unknown>[] = await manager.query(
      `${CLAIM_SELECT}
       WHERE m.id = ${params.add(id)} AND m.status = 'pending' AND e.enabled = ${this.yes}`,
      params.values,
    );
    const [row] = await this.withoutEndedOwners(
      manager,
      rows,
      (r) => r.endpoint_id as string,
      new Date(),
    );
    return row ? this.toClaimed(manager, row) : null;
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
      const reason =
        ended.get(id)?.reason ?? ownerEnded(row, now, (v) => this.readDate(manager, v));
      if (reason) ended.set(id, { reason, row });
      return !reason;
    });
    for (const [id, { reason, row }] of ended) {
      const p = new SqlParams(this.dialect);
      // Only if still bound to the same owner: a PATCH may have re-bound it meanwhile.
      await manager.query(
        `UPDATE webhook_endpoints SET enabled = ${this.no}, disabled_reason = ${p.add(reason)}, updated_at = ${p.add(this.date(manager, now))}
         WHERE id = ${p.add(id)} AND enabled = ${this.yes} AND owner_type = ${p.add(row.owner_type)} AND owner_id = ${p.add(row.owner_id)}
           AND COALESCE(owner_grant_id, '') = ${p.add(row.owner_grant_id ?? '')}`,
        p.values,
      );
      logger.warn(`Disabled webhook endpoint ${id}: its owner credential ended (${reason})`);
    }
    return live;
  }

  private toClaimed(manager: EntityManager, row: Record<string, unknown>): ClaimedMessage {
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
          : this.readDate(manager, row.previous_secret_expires_at),
      eventId: row.event_id as string,
      eventType: row.event_type as EventType,
      eventCreatedAt: this.readDate(manager, row.event_created_at),
      eventData: row.event_data as string,
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
    const params = new SqlParams(this.dialect);
    const ids = [...new Set(completed.map((c) => c.messageId))];
    // Locks the rows (PostgreSQL), so a concurrent delete of the endpoint waits for us; a
    // message already deleted with its endpoint is skipped.
    const rows: { id: string; attempt_count: number; retries_used: number }[] = await manager.query(
      `SELECT id, attempt_count, retries_used FROM webhook_messages
         WHERE id IN (${ids.map((id) => params.add(id)).join(', ')})${this.dialect === 'postgres' ? ' FOR UPDATE' : ''}`,
      params.values,
    );
    const state = new Map(
      rows.map((r) => [
        r.id,
        { attempts: Number(r.attempt_count), retriesUsed: Number(r.retries_used) },
      ]),
    );
    const attempts: WebhookAttemptRecord[] = [];
    const updates = new Map<
      string,
      { status: string; attempts: number; retriesUsed: number; next: Date | null }
    >();
    const succeeded = new Set<string>();
    const failed = new Set<string>();
    const gone = new Set<string>();
    let nextRetryAt: Date | null = null;
    const schedule = this.policy.retryScheduleMs;

    for (const { messageId, endpointId, attemptedAt, result } of completed) {
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
      });
      if (isSuccess(result)) {
        succeeded.add(endpointId);
        updates.set(messageId, {
          status: 'succeeded',
          attempts: current.attempts,
          retriesUsed: current.retriesUsed,
          next: null,
        });
        continue;
      }
      failed.add(endpointId);
      if (result.statusCode === 410) gone.add(endpointId);
      if (current.retriesUsed < schedule.length) {
        let delay = withJitter(schedule[current.retriesUsed]!);
        if (result.retryAfterMs !== null) {
          delay = Math.max(delay, Math.min(result.retryAfterMs, MAX_RETRY_AFTER_MS));
        }
        current.retriesUsed += 1;
        const next = new Date(now.getTime() + delay);
        if (!nextRetryAt || next < nextRetryAt) nextRetryAt = next;
        updates.set(messageId, {
          status: 'pending',
          attempts: current.attempts,
          retriesUsed: current.retriesUsed,
          next,
        });
      } else {
        updates.set(messageId, {
          status: 'failed',
          attempts: current.attempts,
          retriesUsed: current.retriesUsed,
          next: null,
        });
      }
    }

    if (attempts.length > 0) await insertRows(manager, WebhookAttemptRecord, attempts);
    const updatedAt = this.date(manager, now);
    for (const [id, u] of updates) {
      const p = new SqlParams(this.dialect);
      await manager.query(
        `UPDATE webhook_messages SET status = ${p.add(u.status)}, attempt_count = ${p.add(u.attempts)},
           retries_used = ${p.add(u.retriesUsed)}, next_attempt_at = ${p.add(u.next && this.date(manager, u.next))},
           updated_at = ${p.add(updatedAt)}
         WHERE id = ${p.add(id)}`,
        p.values,
      );
    }
    return {
      disabled: await this.updateEndpoints(manager, succeeded, failed, gone, now),
      nextRetryAt,
    };
  }

  /** The failure streak of each endpoint touched, and the disabling it may lead to. */
  private async updateEndpoints(
    manager: EntityManager,
    succeeded: Set<string>,
    failed: Set<string>,
    gone: Set<string>,
    now: Date,
  ): Promise<Disabled[]> {
    const stamp = this.date(manager, now);
    const inList = (p: SqlParams, ids: Iterable<string>) =>
      [...ids].map((id) => p.add(id)).join(', ');
    if (succeeded.size > 0) {
      const p = new SqlParams(this.dialect);
      await manager.query(
        `UPDATE webhook_endpoints SET failing_since = NULL WHERE id IN (${inList(p, succeeded)}) AND failing_since IS NOT NULL`,
        p.values,
      );
    }
    // An endpoint that also succeeded in this batch is not failing everything.
    const failing = [...failed].filter((id) => !succeeded.has(id));
    const disabled: Disabled[] = [];
    if (failing.length > 0) {
      const p = new SqlParams(this.dialect);
      await manager.query(
        `UPDATE webhook_endpoints SET failing_since = ${p.add(stamp)} WHERE id IN (${inList(p, failing)}) AND failing_since IS NULL`,
        p.values,
      );
      // Placeholders are positional on SQLite: add them in the order they appear.
      const q = new SqlParams(this.dialect);
      const ids = inList(q, failing);
      const threshold = q.add(
        this.date(manager, new Date(now.getTime() - this.policy.disableAfterMs)),
      );
      const since: { id: string }[] = await manager.query(
        `SELECT id FROM webhook_endpoints WHERE id IN (${ids}) AND enabled = ${this.yes} AND failing_since <= ${threshold}`,
        q.values,
      );
      for (const { id } of since)
        if (!gone.has(id)) disabled.push({ endpointId: id, reason: 'failing' });
    }
    for (const id of gone) disabled.push({ endpointId: id, reason: 'gone' });
    for (const { endpointId, reason } of disabled) {
      const p = new SqlParams(this.dialect);
      await manager.query(
        `UPDATE webhook_endpoints SET enabled = ${this.no}, disabled_reason = ${p.add(reason)}, updated_at = ${p.add(stamp)}
         WHERE id = ${p.add(endpointId)} AND enabled = ${this.yes}`,
        p.values,
      );
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
): WebhookMessageRecord {
  return {
    id: newId('webhook_message', now.getTime()),
    organizationId,
    endpointId,
    eventId,
    eventType,
    status: 'pending',
    attemptCount: 0,
    retriesUsed: 0,
    nextAttemptAt: now,
    createdAt: now,
    updatedAt: now,
  };
}
