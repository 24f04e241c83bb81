import {
  type REQUEST_LOG_CREDENTIAL_TYPES,
  type REQUEST_LOG_METHODS,
  USAGE_BREAKDOWN_TOP,
  type UsageResource,
} from '@platform/contract';
import type { Sql, SqlParams } from '../database/sql';
import { PORTAL_CLIENT_ID, PORTAL_CLIENT_NAME } from '../oauth/portal-client';

type Breakdown = UsageResource['breakdown'];
type Num = string | number | null;
/**
 * One row of the usage statement. `kind` says what it is: a bin (`a` its key; `n1`–`n4` its
 * server errors, rate-limited, client errors and successes) or a top row of a breakdown (`a`, `b`
 * its key; `n1`, `n2` its requests and errors; `n3`, `n4` every group's, summed in the same read).
 */
export type UsageRow = { kind: string; a: string | null; b: string | null; rank: Num } & Record<
  'n1' | 'n2' | 'n3' | 'n4',
  Num
>;
/** A bin's figures by status class. */
export type BinFigures = {
  success: number;
  client_error: number;
  rate_limited: number;
  server_error: number;
};

const n = (value: Num | undefined) => Number(value ?? 0);
const ERROR = 'CASE WHEN status >= 400 THEN 1 ELSE 0 END';

/**
 * The range's requests per bin, and by credential, by route and by status: the top
 * `USAGE_BREAKDOWN_TOP` of each by count and the remainder as `other`. One statement (four
 * GROUP BYs of the range's rows, from the organization's `(organization_id, created_at)` index, in
 * a UNION ALL), so every figure is read from the same snapshot and each breakdown adds up to the bins exactly, even
 * while the request-log writer adds rows. 600,000 rows over 30 days: PostgreSQL 0.88 s (the four
 * statements on four connections it replaced: 0.80 s), SQLite 2.3 s (as the four statements).
 */
export async function usageRequests(
  sql: Sql,
  organizationId: string,
  where: string,
  bin: string,
  params: SqlParams,
): Promise<{ bins: Map<string, BinFigures>; breakdown: Breakdown }> {
  // PostgreSQL reads the range's rows once (a materialized CTE) and groups them four ways; SQLite
  // scans the index once per grouping, which it does faster than it fills a temporary table.
  const cte = sql.dialect === 'postgres';
  const from = cte ? 'r' : `request_logs WHERE ${where}`;
  const binKey = cte ? 'bin' : bin;
  const top = (kind: string, a: string, b: string, group: string, order: string) =>
    `SELECT * FROM (SELECT '${kind}' AS kind, ${a} AS a, ${b} AS b,
       COUNT(*) AS n1, SUM(${ERROR}) AS n2, SUM(COUNT(*)) OVER () AS n3, SUM(SUM(${ERROR})) OVER () AS n4,
       ROW_NUMBER() OVER (ORDER BY COUNT(*) DESC, ${order}) AS rank
     FROM ${from} GROUP BY ${group} ORDER BY rank LIMIT ${USAGE_BREAKDOWN_TOP}) AS top_${kind}`;
  const rows = await sql.select<UsageRow>(
    `${cte ? `WITH r AS MATERIALIZED (SELECT ${bin} AS bin, credential_type, credential_id, method, route, status FROM request_logs WHERE ${where}) ` : ''}
     SELECT 'bin' AS kind, ${binKey} AS a, NULL AS b,
       SUM(CASE WHEN status >= 500 THEN 1 ELSE 0 END) AS n1,
       SUM(CASE WHEN status = 429 THEN 1 ELSE 0 END) AS n2,
       SUM(CASE WHEN status >= 400 AND status < 500 AND status <> 429 THEN 1 ELSE 0 END) AS n3,
       SUM(CASE WHEN status < 400 THEN 1 ELSE 0 END) AS n4, 0 AS rank
     FROM ${from} GROUP BY ${binKey}
     UNION ALL ${top('credential', 'credential_type', 'credential_id', 'credential_type, credential_id', 'credential_id')}
     UNION ALL ${top('route', 'method', 'route', 'method, route', 'method, route')}
     UNION ALL ${top('status', 'CAST(status AS TEXT)', 'NULL', 'status', 'status')}`,
    params,
  );
  const of = (kind: string) =>
    rows.filter((row) => row.kind === kind).sort((x, y) => n(x.rank) - n(y.rank));
  const bins = new Map(
    of('bin').map((row) => [
      row.a!,
      {
        server_error: n(row.n1),
        rate_limited: n(row.n2),
        client_error: n(row.n3),
        success: n(row.n4),
      },
    ]),
  );
  const credentials = of('credential');
  const routes = of('route');
  const statuses = of('status');
  const names = await credentialNames(
    sql,
    organizationId,
    credentials.map((row) => row.b!),
  );
  const counts = (row: UsageRow) => ({ requests: n(row.n1), errors: n(row.n2) });
  return {
    bins,
    breakdown: {
      credentials: withOther(
        credentials.map((row) => ({
          type: row.a as (typeof REQUEST_LOG_CREDENTIAL_TYPES)[number],
          id: row.b!,
          name: names.get(row.b!) ?? null,
          ...counts(row),
        })),
        credentials,
      ),
      routes: withOther(
        routes.map((row) => ({
          method: row.a as (typeof REQUEST_LOG_METHODS)[number],
          route: row.b!,
          ...counts(row),
        })),
        routes,
      ),
      statuses: withOther(
        statuses.map((row) => ({ status: n(row.a), ...counts(row) })),
        statuses,
      ),
    },
  };
}

function withOther<T extends { requests: number; errors: number }>(data: T[], rows: UsageRow[]) {
  const totals = { requests: n(rows[0]?.n3), errors: n(rows[0]?.n4) };
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
