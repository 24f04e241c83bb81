import { Injectable } from '@nestjs/common';
import {
  DEFAULT_USAGE_RANGE,
  type RequestSource,
  USAGE_BINS,
  type UsageRange,
  type UsageResource,
} from '@platform/contract';
import { Clock } from '../common/clock';
import { toIso } from '../common/timestamp';
import { Sql } from '../database/sql';
import { PORTAL_CLIENT_ID } from '../oauth/portal-client';
import { usageRequests } from './usage-breakdown';

/** Rows of one bin, as the database sums them (drivers answer numbers or numeric strings). */
type BinRow = Record<string, string | number | null> & { bin: string };

/**
 * The text key of a bin of each length, as both dialects write it: `YYYY-MM-DD HH:MM` (minute),
 * `YYYY-MM-DD HH` (hour), `YYYY-MM-DD` (day). SQLite stores TypeORM's UTC text
 * (`YYYY-MM-DD HH:MM:SS.SSS`), so a prefix is the key; PostgreSQL formats its timestamptz in UTC.
 */
const BIN_KEYS: Record<number, { length: number; format: string; suffix: string }> = {
  60: { length: 16, format: 'YYYY-MM-DD HH24:MI', suffix: ':00Z' },
  3600: { length: 13, format: 'YYYY-MM-DD HH24', suffix: ':00:00Z' },
  86_400: { length: 10, format: 'YYYY-MM-DD', suffix: ' 00:00:00Z' },
};

const n = (value: string | number | null | undefined) => Number(value ?? 0);

/**
 * The figures of one organization over a range ending now: requests by status class from the
 * request log, webhook delivery attempts by outcome, per bin (every bin of the range filled in,
 * zeros included), and the requests broken down by credential, route and status. Each figure is
 * one GROUP BY in the database over the organization's `(organization_id, created_at)` index,
 * bounded on both sides by the range; the request figures are one statement, so they agree.
 */
@Injectable()
export class UsageService {
  constructor(
    private readonly sql: Sql,
    private readonly clock: Clock,
  ) {}

  /** `source`: an integration's requests (`api`) or the portal's own calls, counted apart. */
  async usage(
    organizationId: string,
    source: RequestSource = 'api',
    range: UsageRange = DEFAULT_USAGE_RANGE,
  ): Promise<UsageResource> {
    const { count, seconds } = USAGE_BINS[range];
    const binMs = seconds * 1000;
    const to = Math.floor(this.clock.nowMs() / binMs) * binMs + binMs;
    const from = to - count * binMs;
    const params = {
      org: organizationId,
      since: this.at(new Date(from)),
      until: this.at(new Date(to)),
      portal: PORTAL_CLIENT_ID,
    };
    const where = `organization_id = :org AND created_at >= :since AND created_at < :until AND credential_id ${source === 'portal' ? '=' : '<>'} :portal`;
    const [requests, deliveries] = await Promise.all([
      usageRequests(this.sql, organizationId, where, this.binOf('created_at', seconds), params),
      this.sql.select<BinRow>(
        `SELECT ${this.binOf('a.attempted_at', seconds)} AS bin,
           SUM(CASE WHEN a.status_code >= 200 AND a.status_code < 300 THEN 1 ELSE 0 END) AS succeeded,
           COUNT(*) AS attempts
         FROM webhook_attempts a JOIN webhook_messages m ON m.id = a.message_id
         WHERE m.organization_id = :org AND a.attempted_at >= :since AND a.attempted_at < :until
         GROUP BY bin`,
        { org: organizationId, since: params.since, until: params.until },
      ),
    ]);
    const requestBins = new Map([...requests.bins].map(([bin, row]) => [this.binMs(bin), row]));
    const deliveryBins = new Map(deliveries.map((row) => [this.binMs(row.bin), row]));
    const starts = Array.from({ length: count }, (_, i) => toIso(new Date(from + i * binMs)));
    const requestFigures = starts.map((start, i) => {
      const row = requestBins.get(from + i * binMs);
      return {
        hour: start,
        start,
        success: row?.success ?? 0,
        client_error: row?.client_error ?? 0,
        rate_limited: row?.rate_limited ?? 0,
        server_error: row?.server_error ?? 0,
      };
    });
    return {
      object: 'usage',
      range,
      bin_seconds: seconds,
      from: toIso(new Date(from)),
      to: toIso(new Date(to)),
      requests: requestFigures,
      webhook_deliveries: starts.map((start, i) => {
        const row = deliveryBins.get(from + i * binMs);
        const succeeded = n(row?.succeeded);
        return { hour: start, start, succeeded, failed: n(row?.attempts) - succeeded };
      }),
      breakdown: requests.breakdown,
    };
  }

  /** A timestamp as the column holds it: SQLite's UTC text, PostgreSQL's timestamptz. */
  private at(date: Date): Date | string {
    return this.sql.dialect === 'postgres'
      ? date
      : date.toISOString().replace('T', ' ').slice(0, 23);
  }

  /** The bin key of a UTC timestamp column, in either dialect. */
  private binOf(column: string, seconds: number): string {
    const key = BIN_KEYS[seconds]!;
    return this.sql.dialect === 'postgres'
      ? `to_char(${column} AT TIME ZONE 'UTC', '${key.format}')`
      : `substr(${column}, 1, ${key.length})`;
  }

  private binMs(bin: string): number {
    const key = BIN_KEYS[bin.length === 16 ? 60 : bin.length === 13 ? 3600 : 86_400]!;
    return Date.parse(`${bin}${key.suffix}`.replace(' ', 'T'));
  }
}
