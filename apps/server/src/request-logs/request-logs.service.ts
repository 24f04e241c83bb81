import { Inject, Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import {
  contract,
  type ListQuery,
  type RequestLogResource,
  type REQUEST_LOG_METHODS,
  type RequestSource,
  type StatusClass,
} from '@platform/contract';
import { LessThan, type Repository } from 'typeorm';
import { Clock } from '../common/clock';
import { publicId } from '../common/ids';
import { type ComputedFilter, ListCollection } from '../common/list/find-page';
import { pageEnvelope, type PageUrl } from '../common/list/page-envelope';
import { notFound } from '../common/resource-errors';
import { toIso } from '../common/timestamp';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/env';
import { Sql } from '../database/sql';
import { PORTAL_CLIENT_ID } from '../oauth/portal-client';
import { RequestLogRecord } from './request-log.entity';

const DAY_MS = 86_400_000;

/**
 * `source=…` as SQL: the portal's own calls are those of its built-in OAuth client; every other
 * credential is an integration's (`api`).
 */
export const sourcePredicate: ComputedFilter = (values, sql) => {
  const credential = sql.column('credentialId');
  const portal = () => sql.bind('credentialId', PORTAL_CLIENT_ID);
  const sources: Record<RequestSource, () => string> = {
    api: () => `${credential} <> ${portal()}`,
    portal: () => `${credential} = ${portal()}`,
  };
  const chosen = new Set(values as RequestSource[]);
  return chosen.size === 2 ? '1 = 1' : [...chosen].map((value) => sources[value]()).join(' OR ');
};

/** Requests are shown apart by source: without `source`, an integration's only. */
const DEFAULT_SOURCE = { field: 'source', op: 'in' as const, values: ['api'] };

export function toRequestLogResource(record: RequestLogRecord): RequestLogResource {
  return {
    id: publicId('request_log', record.id),
    object: 'request_log',
    method: record.method as (typeof REQUEST_LOG_METHODS)[number],
    route: record.route,
    path: record.path,
    status: record.status,
    status_class: record.statusClass as StatusClass,
    latency_ms: record.latencyMs,
    credential: { type: record.credentialType, id: record.credentialId },
    request_id: record.requestId,
    error_code: record.errorCode,
    created_at: toIso(record.createdAt),
  };
}

@Injectable()
export class RequestLogsService {
  private readonly listed: ListCollection<RequestLogRecord>;

  constructor(
    @InjectRepository(RequestLogRecord) private readonly logs: Repository<RequestLogRecord>,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    sql: Sql,
    private readonly clock: Clock,
  ) {
    // Entries never change, so `updated_at` (and `updated_since`) is `created_at`.
    this.listed = ListCollection.of(
      sql,
      logs,
      contract.requestLogs.list.query,
      { updated_at: 'created_at' },
      { source: sourcePredicate },
    );
  }

  async list(organizationId: string, query: ListQuery, url: PageUrl) {
    const { rows, total } = await this.listed.find(organizationId, {
      ...query,
      conditions: [
        ...query.conditions,
        ...(query.conditions.some((c) => c.field === 'source') ? [] : [DEFAULT_SOURCE]),
        this.retainedCondition(),
      ],
    });
    return { data: rows.map(toRequestLogResource), ...pageEnvelope(url, query, total) };
  }

  async retrieve(organizationId: string, id: string): Promise<RequestLogResource> {
    const record = await this.logs.findOneBy({ id, organizationId });
    if (!record || record.createdAt < this.cutoff()) throw notFound('request log', id);
    return toRequestLogResource(record);
  }

  /** Deletes entries older than `REQUEST_LOG_RETENTION_DAYS`; returns how many. */
  async prune(now = this.clock.now()): Promise<number> {
    const result = await this.logs.delete({ createdAt: LessThan(this.cutoff(now)) });
    return result.affected ?? 0;
  }

  /** Entries older than this are past retention: hidden at once, deleted by the next prune. */
  cutoff(now = this.clock.now()): Date {
    return new Date(now.getTime() - this.config.requestLog.retentionDays * DAY_MS);
  }

  private retainedCondition() {
    return { field: 'created_at', op: 'gte' as const, value: this.cutoff() };
  }
}
