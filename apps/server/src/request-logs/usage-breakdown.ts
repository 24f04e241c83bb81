import {
  type REQUEST_LOG_CREDENTIAL_TYPES,
  type REQUEST_LOG_METHODS,
  USAGE_BREAKDOWN_TOP,
  type UsageResource,
} from '@platform/contract';
import type { Sql, SqlParams } from '../database/sql';
import { PORTAL_CLIENT_ID, PORTAL_CLIENT_NAME } from '../oauth/portal-client';

type Breakdown = UsageResource['breakdown'];
type Counted = {
  requests: string | number;
  errors: string | number | null;
  /** Every group's requests and errors, summed in the same statement (a window over the groups). */
  all_requests: string | number;
  all_errors: string | number | null;
};
/** A breakdown's total: its `other` is this less its top rows. */
type UsageTotals = { requests: number; errors: number };

const n = (value: string | number | null | undefined) => Number(value ?? 0);

/**
 * The range's requests by credential, by route and by status: the top `USAGE_BREAKDOWN_TOP` of
 * each by count (one GROUP BY over the organization's `(organization_id, created_at)` index, the
 * same rows the bins count), and the remainder as `other`. Each statement sums every group in
 * the same read (a window over the groups), so `data` plus `other` is exactly that breakdown's
 * total, even while the request-log writer adds rows between the reads.
 */
export async function usageBreakdown(
  sql: Sql,
  organizationId: string,
  where: string,
  params: SqlParams,
): Promise<Breakdown> {
  const top = <T extends Counted>(columns: string, group: string, order: string) =>
    sql.select<T>(
      `SELECT ${columns}, COUNT(*) AS requests, SUM(CASE WHEN status >= 400 THEN 1 ELSE 0 END) AS errors,
         SUM(COUNT(*)) OVER () AS all_requests,
         SUM(SUM(CASE WHEN status >= 400 THEN 1 ELSE 0 END)) OVER () AS all_errors
       FROM request_logs WHERE ${where}
       GROUP BY ${group} ORDER BY requests DESC, ${order} LIMIT ${USAGE_BREAKDOWN_TOP}`,
      params,
    );
  type CredentialRow = Counted & { credential_type: string; credential_id: string };
  type RouteRow = Counted & { method: string; route: string };
  type StatusRow = Counted & { status: string | number };
  const [credentials, routes, statuses] = await Promise.all([
    top<CredentialRow>(
      'credential_type, credential_id',
      'credential_type, credential_id',
      'credential_id',
    ),
    top<RouteRow>('method, route', 'method, route', 'method, route'),
    top<StatusRow>('status', 'status', 'status'),
  ]);
  const names = await credentialNames(
    sql,
    organizationId,
    credentials.map((row) => row.credential_id),
  );
  const counts = (row: Counted) => ({ requests: n(row.requests), errors: n(row.errors) });
  return {
    credentials: withOther(
      credentials.map((row) => ({
        type: row.credential_type as (typeof REQUEST_LOG_CREDENTIAL_TYPES)[number],
        id: row.credential_id,
        name: names.get(row.credential_id) ?? null,
        ...counts(row),
      })),
      credentials,
    ),
    routes: withOther(
      routes.map((row) => ({
        method: row.method as (typeof REQUEST_LOG_METHODS)[number],
        route: row.route,
        ...counts(row),
      })),
      routes,
    ),
    statuses: withOther(
      statuses.map((row) => ({ status: n(row.status), ...counts(row) })),
      statuses,
    ),
  };
}

function withOther<T extends UsageTotals>(data: T[], rows: Counted[]) {
  const totals = { requests: n(rows[0]?.all_requests), errors: n(rows[0]?.all_errors) };
  const shown = data.reduce(
    (sum, row) => ({ requests: sum.requests + row.requests, errors: sum.errors + row.errors }),
    { requests: 0, errors: 0 },
  );
  return {
    data,
    other: { requests: totals.requests - shown.requests, errors: totals.errors - shown.errors },
  };
}

/** The names of the credentials that still exist (tokens and OAuth clients of the organization). */
async function credentialNames(
  sql: Sql,
  organizationId: string,
  ids: string[],
): Promise<Map<string, string>> {
  const names = new Map<string, string>([[PORTAL_CLIENT_ID, PORTAL_CLIENT_NAME]]);
  if (ids.length === 0) return names;
  const rows = await sql.select<{ id: string; name: string }>(
    `SELECT id, name FROM personal_access_tokens WHERE organization_id = :org AND id IN (:...ids)
     UNION ALL
     SELECT id, name FROM oauth_clients WHERE organization_id = :org AND id IN (:...ids)`,
    { org: organizationId, ids },
  );
  for (const row of rows) names.set(row.id, row.name);
  return names;
}
