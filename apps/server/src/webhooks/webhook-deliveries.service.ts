import { Inject, Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import {
  contract,
  type ListQuery,
  WEBHOOK_REPLAY_MAX_DAYS,
  WEBHOOK_STATS_WINDOW_HOURS,
  type WebhookDelivery,
  type WebhookEndpointStats,
  type WebhookReplay,
} from '@platform/contract';
import { type EntityManager, In, MoreThanOrEqual, type Repository } from 'typeorm';
import type { Principal } from '../common/principal';
import { Clock } from '../common/clock';
import { findOwned, findOwnedForUpdate, lockOwned } from '../common/find-owned';
import { invalidField } from '../common/resource-errors';
import { ListCollection } from '../common/list/find-page';
import { pageEnvelope, type PageUrl } from '../common/list/page-envelope';
import { toIso } from '../common/timestamp';
import { TransactionRunner } from '../common/transactions';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/env';
import { Sql } from '../database/sql';
import { Metrics } from '../metrics/metrics';
import { WebhookAttemptRecord } from './webhook-attempt.entity';
import { WebhookDispatcher } from './webhook-dispatcher';
import { WebhookEndpointRecord } from './webhook-endpoint.entity';
import { endpointDisabled } from './webhook-errors';
import { WebhookMessageRecord } from './webhook-message.entity';
import { publicId } from '../common/ids';

@Injectable()
export class WebhookDeliveriesService {
  private readonly scheduleLength: number;

  private readonly listed: ListCollection<WebhookMessageRecord>;

  constructor(
    @InjectRepository(WebhookMessageRecord)
    private readonly messages: Repository<WebhookMessageRecord>,
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly transactions: TransactionRunner,
    private readonly sql: Sql,
    private readonly dispatcher: WebhookDispatcher,
    metrics: Metrics,
    private readonly clock: Clock,
  ) {
    // `endpoint_id` is the path's endpoint, a condition the service adds itself.
    this.listed = ListCollection.of(
      this.sql,
      messages,
      contract.webhookEndpoints.deliveries.query,
      {
        endpoint_id: 'endpoint_id',
      },
    );
    this.scheduleLength = config.webhooks.retryScheduleMs.length;
    metrics.countQueueWith(() => this.messages.countBy({ status: 'pending' }));
  }

  async list(principal: Principal, endpointId: string, query: ListQuery, url: PageUrl) {
    const manager = this.messages.manager;
    await findOwned(
      manager,
      WebhookEndpointRecord,
      principal.organizationId,
      endpointId,
      'webhook endpoint',
    );
    const { rows, total } = await this.listed.find(principal.organizationId, {
      ...query,
      conditions: [{ field: 'endpoint_id', op: 'in', values: [endpointId] }, ...query.conditions],
    });
    return { data: await this.withAttempts(manager, rows), ...pageEnvelope(url, query, total) };
  }

  async retrieve(principal: Principal, id: string): Promise<WebhookDelivery> {
    const manager = this.messages.manager;
    const message = await this.find(manager, principal, id);
    return (await this.withAttempts(manager, [message]))[0]!;
  }

  /**
   * Redelivery: due now, same message id. A pending delivery keeps its place in the retry
   * schedule; a finished one gets one attempt (its schedule is spent), so a failed redelivery
   * is `failed` again rather than starting a second week of retries.
   */
  async retry(principal: Principal, id: string): Promise<WebhookDelivery> {
    return this.transactions.run(async (manager) => {
      await lockOwned(this.sql, manager, WebhookMessageRecord, principal.organizationId, id);
      const message = await this.find(manager, principal, id);
      const endpoint = await manager.findOneByOrFail(WebhookEndpointRecord, {
        id: message.endpointId,
      });
      if (!endpoint.enabled) throw endpointDisabled(endpoint.id);
      const now = this.clock.now();
      if (message.status !== 'pending') message.retriesUsed = this.scheduleLength;
      message.status = 'pending';
      message.nextAttemptAt = now;
      message.updatedAt = now;
      await manager.save(WebhookMessageRecord, message);
      this.dueOnCommit(manager);
      return (await this.withAttempts(manager, [message]))[0]!;
    });
  }

  /** The endpoint's attempts over the last 24 hours: counts, success rate, latency percentiles. */
  async stats(principal: Principal, endpointId: string): Promise<WebhookEndpointStats> {
    const manager = this.messages.manager;
    const endpoint = await findOwned(
      manager,
      WebhookEndpointRecord,
      principal.organizationId,
      endpointId,
      'webhook endpoint',
    );
    const to = this.clock.now();
    const from = new Date(to.getTime() - WEBHOOK_STATS_WINDOW_HOURS * 3_600_000);
    const attempts = await manager
      .createQueryBuilder(WebhookAttemptRecord, 'attempt')
      .innerJoin(WebhookMessageRecord, 'message', 'message.id = attempt.messageId')
      .select(['attempt.messageId', 'attempt.number', 'attempt.statusCode', 'attempt.latencyMs'])
      .where('message.organizationId = :organizationId', {
        organizationId: principal.organizationId,
      })
      .andWhere('message.endpointId = :endpointId', { endpointId: endpoint.id })
      .andWhere('attempt.attemptedAt >= :from', { from })
      .getMany();
    const succeeded = attempts.filter(
      (a) => a.statusCode !== null && a.statusCode >= 200 && a.statusCode < 300,
    ).length;
    const latencies = attempts.map((a) => a.latencyMs).sort((a, b) => a - b);
    const percentile = (p: number) =>
      latencies.length
        ? latencies[Math.min(latencies.length - 1, Math.ceil(p * latencies.length) - 1)]!
        : null;
    return {
      object: 'webhook_endpoint_stats',
      endpoint_id: publicId('webhook_endpoint', endpoint.id),
      from: toIso(from),
      to: toIso(to),
      attempts: attempts.length,
      succeeded,
      failed: attempts.length - succeeded,
      success_rate: attempts.length ? succeeded / attempts.length : null,
      latency_ms: {
        p50: percentile(0.5),
        p95: percentile(0.95),
        max: latencies.at(-1) ?? null,
      },
    };
  }

  /**
   * "Replay every failed delivery since": each failed message of the endpoint created at or
   * after `since` is due now with one more attempt, as a redelivery of it would be.
   */
  async replayFailed(
    principal: Principal,
    endpointId: string,
    since: string,
  ): Promise<WebhookReplay> {
    const from = new Date(since);
    const now = this.clock.now();
    if (from.getTime() < now.getTime() - WEBHOOK_REPLAY_MAX_DAYS * 86_400_000)
      throw invalidField('since', `must be at most ${WEBHOOK_REPLAY_MAX_DAYS} days ago`);
    return this.transactions.run(async (manager) => {
      const endpoint = await findOwnedForUpdate(
        this.sql,
        manager,
        WebhookEndpointRecord,
        principal.organizationId,
        endpointId,
        'webhook endpoint',
      );
      if (!endpoint.enabled) throw endpointDisabled(endpoint.id);
      const result = await manager.update(
        WebhookMessageRecord,
        {
          organizationId: principal.organizationId,
          endpointId: endpoint.id,
          status: 'failed',
          createdAt: MoreThanOrEqual(from),
        },
        { status: 'pending', nextAttemptAt: now, updatedAt: now, retriesUsed: this.scheduleLength },
      );
      const queued = result.affected ?? 0;
      if (queued > 0) this.dueOnCommit(manager);
      return {
        object: 'webhook_replay' as const,
        endpoint_id: publicId('webhook_endpoint', endpoint.id),
        since: toIso(from),
        queued,
      };
    });
  }

  /** A re-enabled endpoint's pending messages become due now. */
  async resumePending(manager: EntityManager, endpointId: string, now: Date): Promise<void> {
    await manager.update(
      WebhookMessageRecord,
      { endpointId, status: 'pending' },
      { nextAttemptAt: now },
    );
    this.dueOnCommit(manager);
  }

  /** Messages this transaction made due now go out once it commits, not on the next poll. */
  private dueOnCommit(manager: EntityManager): void {
    this.transactions.afterCommit(manager, () => this.dispatcher.wake());
  }

  toResource(message: WebhookMessageRecord, attempts: WebhookAttemptRecord[]): WebhookDelivery {
    return {
      id: publicId('webhook_message', message.id),
      object: 'webhook_delivery',
      endpoint_id: publicId('webhook_endpoint', message.endpointId),
      event_id: publicId('event', message.eventId),
      event_type: message.eventType,
      status: message.status,
      attempt_count: message.attemptCount,
      next_attempt_at:
        message.status === 'pending' && message.nextAttemptAt ? toIso(message.nextAttemptAt) : null,
      attempts: attempts.map((a) => ({
        attempted_at: toIso(a.attemptedAt),
        status_code: a.statusCode,
        latency_ms: a.latencyMs,
        response_body: a.responseBody,
        error: a.error,
        request_headers: a.requestHeaders,
      })),
      created_at: toIso(message.createdAt),
      updated_at: toIso(message.updatedAt),
    };
  }

  private async withAttempts(
    manager: EntityManager,
    messages: WebhookMessageRecord[],
  ): Promise<WebhookDelivery[]> {
    if (messages.length === 0) return [];
    const attempts = await manager.find(WebhookAttemptRecord, {
      where: { messageId: In(messages.map((m) => m.id)) },
      order: { messageId: 'ASC', number: 'ASC' },
    });
    const byMessage = new Map<string, WebhookAttemptRecord[]>();
    const counts = new Map(messages.map((m) => [m.id, m.attemptCount]));
    for (const attempt of attempts) {
      // An attempt recorded after its delivery was read (its number past the count read, written
      // in one transaction with it) belongs to a later state: showing it would contradict the
      // delivery's own `status` and `attempt_count`.
      if (attempt.number > counts.get(attempt.messageId)!) continue;
      const list = byMessage.get(attempt.messageId) ?? [];
      list.push(attempt);
      byMessage.set(attempt.messageId, list);
    }
    return messages.map((m) => this.toResource(m, byMessage.get(m.id) ?? []));
  }

  private find(manager: EntityManager, principal: Principal, id: string) {
    return findOwned(
      manager,
      WebhookMessageRecord,
      principal.organizationId,
      id,
      'webhook delivery',
    );
  }
}
