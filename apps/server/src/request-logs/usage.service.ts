import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type RequestSource, USAGE_HOURS, type UsageResource } from '@platform/contract';
import type { DataSource } from 'typeorm';
import { Clock } from '../common/clock';
import { toIso } from '../common/timestamp';
import { Sql } from '../database/sql';
import { PORTAL_CLIENT_ID } from '../oauth/portal-client';
import { WebhookAttemptRecord } from '../webhooks/webhook-attempt.entity';
import { WebhookMessageRecord } from '../webhooks/webhook-message.entity';
import { RequestLogRecord } from './request-log.entity';

const HOUR_MS = 3_600_000;

/** Rows of one hour, as the database sums them (drivers answer numbers or numeric strings). */
type HourRow = Record<string, string | number | null> & { hour: string };

/**
 * Per-hour figures of one organization for the last 7 days: requests by status class from the
 * request log, webhook delivery attempts by outcome. Summed in the database (one GROUP BY per
 * figure over the organization's index), then every hour of the window filled in, zeros included.
 */
@Injectable()
export class UsageService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly sql: Sql,
    private readonly clock: Clock,
  ) {}

  /** `source`: an integration's requests (`api`) or the portal's own calls, counted apart. */
  async usage(organizationId: string, source: RequestSource = 'api'): Promise<UsageResource> {
    const now = this.clock.nowMs();
    const to = Math.floor(now / HOUR_MS) * HOUR_MS + HOUR_MS;
    const from = to - USAGE_HOURS * HOUR_MS;
    const since = new Date(from);
    const manager = this.dataSource.manager;

    const requests = await manager
      .createQueryBuilder(RequestLogRecord, 'log')
      .select(this.hourOf('log.created_at'), 'hour')
      .addSelect('SUM(CASE WHEN log.status >= 500 THEN 1 ELSE 0 END)', 'server_error')
      .addSelect('SUM(CASE WHEN log.status = 429 THEN 1 ELSE 0 END)', 'rate_limited')
      .addSelect(
        'SUM(CASE WHEN log.status >= 400 AND log.status < 500 AND log.status <> 429 THEN 1 ELSE 0 END)',
        'client_error',
      )
      .addSelect('SUM(CASE WHEN log.status < 400 THEN 1 ELSE 0 END)', 'success')
      .where('log.organizationId = :organizationId', { organizationId })
      .andWhere('log.createdAt >= :since', { since })
      .andWhere(
        source === 'portal' ? 'log.credentialId = :portal' : 'log.credentialId <> :portal',
        { portal: PORTAL_CLIENT_ID },
      )
      .groupBy('hour')
      .getRawMany<HourRow>();

    const deliveries = await manager
      .createQueryBuilder(WebhookAttemptRecord, 'attempt')
      .innerJoin(WebhookMessageRecord, 'message', 'message.id = attempt.messageId')
      .select(this.hourOf('attempt.attempted_at'), 'hour')
      .addSelect(
        'SUM(CASE WHEN attempt.status_code >= 200 AND attempt.status_code < 300 THEN 1 ELSE 0 END)',
        'succeeded',
      )
      .addSelect('COUNT(*)', 'attempts')
      .where('message.organizationId = :organizationId', { organizationId })
      .andWhere('attempt.attemptedAt >= :since', { since })
      .groupBy('hour')
      .getRawMany<HourRow>();

    const byHour = (rows: HourRow[]) => new Map(rows.map((row) => [this.hourMs(row.hour), row]));
    const requestHours = byHour(requests);
    const deliveryHours = byHour(deliveries);
    const n = (value: string | number | null | undefined) => Number(value ?? 0);
    const hours = Array.from({ length: USAGE_HOURS }, (_, i) => from + i * HOUR_MS);
    return {
      object: 'usage',
      from: toIso(new Date(from)),
      to: toIso(new Date(to)),
      requests: hours.map((hour) => {
        const row = requestHours.get(hour);
        return {
          hour: toIso(new Date(hour)),
          success: n(row?.success),
          client_error: n(row?.client_error),
          rate_limited: n(row?.rate_limited),
          server_error: n(row?.server_error),
        };
      }),
      webhook_deliveries: hours.map((hour) => {
        const row = deliveryHours.get(hour);
        const succeeded = n(row?.succeeded);
        return { hour: toIso(new Date(hour)), succeeded, failed: n(row?.attempts) - succeeded };
      }),
    };
  }

  /** `YYYY-MM-DD HH` of a UTC timestamp column, in either dialect. */
  private hourOf(column: string): string {
    return this.sql.dialect === 'postgres'
      ? `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24')`
      : // SQLite stores TypeORM's UTC text, `YYYY-MM-DD HH:MM:SS.SSS`.
        `substr(${column}, 1, 13)`;
  }

  private hourMs(hour: string): number {
    return Date.parse(`${hour.replace(' ', 'T')}:00:00Z`);
  }
}
