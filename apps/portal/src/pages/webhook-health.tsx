import { useEffect, useState } from 'react';
import type { PlatformClient, WebhookEndpoint, WebhookEndpointStats } from '@platform/client';
import { formatDate } from '../api';

/** Below this 24-hour success rate an endpoint that still gets through is Degraded. */
const DEGRADED_BELOW = 0.95;

const DISABLED_WHY: Record<NonNullable<WebhookEndpoint['disabled_reason']>, string> = {
  requested: 'disabled by a member',
  gone: 'it answered 410 Gone',
  failing: 'every attempt failed for 5 days',
  credential_revoked: 'the credential that made it was revoked',
  credential_expired: 'the credential that made it expired',
  member_removed: 'the member it belongs to left',
};

export type HealthKind = 'healthy' | 'degraded' | 'failing' | 'disabled' | 'unknown';

export interface Health {
  kind: HealthKind;
  label: string;
  /** Why, in a few words (the disabled reason), or null. */
  why: string | null;
}

/**
 * An endpoint's health: Disabled (with why), Failing (its attempts fail since `failing_since`,
 * none succeeded since), Degraded (it gets through, under 95 % of attempts in 24 hours) or
 * Healthy. Without its stats (still loading) an enabled, not failing endpoint is only "Enabled".
 */
export function healthOf(endpoint: WebhookEndpoint, stats: WebhookEndpointStats | null): Health {
  if (!endpoint.enabled)
    return {
      kind: 'disabled',
      label: 'Disabled',
      why: DISABLED_WHY[endpoint.disabled_reason ?? 'requested'],
    };
  if (endpoint.failing_since) return { kind: 'failing', label: 'Failing', why: null };
  if (!stats) return { kind: 'unknown', label: 'Enabled', why: null };
  if (stats.success_rate !== null && stats.success_rate < DEGRADED_BELOW)
    return { kind: 'degraded', label: 'Degraded', why: null };
  return { kind: 'healthy', label: 'Healthy', why: null };
}

export function HealthBadge({ health }: { health: Health }) {
  return (
    <span className="hook-badge" data-health={health.kind}>
      {health.label}
      {health.why ? `: ${health.why}` : ''}
    </span>
  );
}

/** "91 % of 23 attempts in 24 h", or that there were none. */
export function successRate(stats: WebhookEndpointStats): string {
  if (stats.attempts === 0) return 'No attempts in 24 h';
  return `${Math.round((stats.success_rate ?? 0) * 100)}% of ${stats.attempts} attempt${stats.attempts === 1 ? '' : 's'} in 24 h`;
}

/** The warning before the automatic disable, while an enabled endpoint fails. */
export function DisableWarning({ endpoint }: { endpoint: WebhookEndpoint }) {
  if (!endpoint.enabled || !endpoint.failing_since || !endpoint.disables_at) return null;
  return (
    <p className="hook-warning">
      Failing since {formatDate(endpoint.failing_since)}; it will be disabled at{' '}
      {formatDate(endpoint.disables_at)} unless a delivery succeeds.
    </p>
  );
}

/**
 * The 24-hour stats of each endpoint shown, one request each in parallel: a list holds at most
 * MAX_WEBHOOK_ENDPOINTS (16). A failed request leaves that endpoint without stats.
 */
export function useEndpointStats(
  client: PlatformClient,
  ids: readonly string[],
  version: unknown = null,
): Record<string, WebhookEndpointStats> {
  const [stats, setStats] = useState<Record<string, WebhookEndpointStats>>({});
  const key = ids.join(',');
  useEffect(() => {
    let live = true;
    const wanted = key ? key.split(',') : [];
    void Promise.all(
      wanted.map((id) =>
        client.webhookEndpoints.stats({ params: { id } }).then(
          (found) => [id, found] as const,
          () => null,
        ),
      ),
    ).then((found) => {
      if (live) setStats(Object.fromEntries(found.filter((f) => f !== null)));
    });
    return () => {
      live = false;
    };
  }, [client, key, version]);
  return stats;
}
