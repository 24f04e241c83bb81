/**
 * Which leased candidates may go now: per organization and per endpoint limits, and each
 * endpoint's fair share of its organization's slots. Used by `DeliveryStore.claim` through
 * `ClaimLimits`, by the embedded dispatcher (`admitWithin`) and the queued one (`fairShares`).
 */
import type { ClaimedMessage } from './delivery-types';

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

/** Slots in use and allowed, by organization or endpoint id. */
export interface SlotCounts {
  held(id: string): number;
  limit(id: string): number;
}

/**
 * Each endpoint's fair share of its organization's slots: the organization's limit divided among
 * its endpoints that want slots now (those in `busy`, holding slots, and those among
 * `candidates`), at least one, and never more than the endpoint's own limit. So endpoints that
 * hang cannot fill their organization's share between them and starve its healthy ones.
 */
export function fairShares(
  candidates: readonly Pick<ClaimedMessage, 'organizationId' | 'endpointId'>[],
  organizationLimit: (organizationId: string) => number,
  endpointLimit: (endpointId: string) => number,
  busy: (organizationId: string) => Iterable<string> = () => [],
): Map<string, number> {
  const contenders = new Map<string, Set<string>>();
  for (const { organizationId, endpointId } of candidates) {
    let endpoints = contenders.get(organizationId);
    if (!endpoints) contenders.set(organizationId, (endpoints = new Set(busy(organizationId))));
    endpoints.add(endpointId);
  }
  const shares = new Map<string, number>();
  for (const [organizationId, endpoints] of contenders) {
    const share = Math.max(1, Math.floor(organizationLimit(organizationId) / endpoints.size));
    for (const endpointId of endpoints) {
      shares.set(endpointId, Math.min(share, endpointLimit(endpointId)));
    }
  }
  return shares;
}

/**
 * An admission that counts in memory what it lets through against each organization's and
 * endpoint's slots (the embedded dispatcher's, in this process); an endpoint gets at most its
 * fair share of its organization's (`fairShares`).
 */
export function admitWithin(
  organizations: SlotCounts,
  endpoints: SlotCounts,
  busy: (organizationId: string) => Iterable<string>,
): ClaimLimits['admit'] {
  const byOrganization = new Map<string, number>();
  const byEndpoint = new Map<string, number>();
  return (candidates, max) => {
    const decision: Admitted = { admitted: [], fullOrganizations: [], fullEndpoints: [] };
    const shares = fairShares(
      candidates,
      (id) => organizations.limit(id),
      (id) => endpoints.limit(id),
      busy,
    );
    for (const message of candidates) {
      if (decision.admitted.length >= max) break;
      const { organizationId, endpointId } = message;
      const ofOrganization =
        organizations.held(organizationId) + (byOrganization.get(organizationId) ?? 0);
      const ofEndpoint = endpoints.held(endpointId) + (byEndpoint.get(endpointId) ?? 0);
      if (ofOrganization >= organizations.limit(organizationId)) {
        decision.fullOrganizations.push(organizationId);
      } else if (ofEndpoint >= (shares.get(endpointId) ?? endpoints.limit(endpointId))) {
        decision.fullEndpoints.push(endpointId);
      } else {
        byOrganization.set(organizationId, (byOrganization.get(organizationId) ?? 0) + 1);
        byEndpoint.set(endpointId, (byEndpoint.get(endpointId) ?? 0) + 1);
        decision.admitted.push(message);
      }
    }
    return decision;
  };
}
