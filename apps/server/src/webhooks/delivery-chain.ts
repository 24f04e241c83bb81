/**
 * Each delivery's `previous_position`: the position of the change delivered to its endpoint
 * before it, so that an endpoint subscribed to some types only can tell a gap (a change of its
 * types it was never sent) from the changes of other types that it never subscribed to.
 *
 * It is a property of the feed, not of the order in which deliveries are made: the latest
 * change of the organization below the delivery's position that the endpoint delivers (its
 * subscribed types its owner may read), after the endpoint's chain start (`chain_start`, the
 * feed head when it was created or its `events` changed); null when there is none. Positions are
 * immutable and every change below a committed one has committed (`FeedPositions`), so
 * concurrent fan-outs, in any order, compute the same chain, and a change the endpoint missed
 * while it was disabled shows as a gap.
 */
import { EVENT_TYPES } from '@platform/contract';
import type { PendingFanOut } from '../events/events.service';

/** An endpoint as fan-out sees it. */
export interface ChainedEndpoint {
  id: string;
  /** The event types it subscribes to, or `*`. */
  types: ReadonlySet<string>;
  /** Which types its member owner's role may read now; null for the organization's own. */
  readable: ((type: string) => boolean) | null;
  chainStart: number;
}

/** One delivery to make: `event` to `endpoint`, with the change before it in its chain. */
export interface ChainLink {
  event: PendingFanOut;
  endpointId: string;
  previousPosition: number | null;
}

/**
 * The latest position below `before` (and above `after`) of a change of `organizationId` whose
 * type is one of `types`; null if none. One indexed read.
 */
export type PreviousChange = (
  organizationId: string,
  types: readonly string[],
  before: number,
  after: number,
) => Promise<number | null>;

export function delivers(endpoint: ChainedEndpoint, type: string): boolean {
  if (!endpoint.types.has('*') && !endpoint.types.has(type)) return false;
  return !endpoint.readable || endpoint.readable(type);
}

/**
 * The deliveries `events` make to the endpoints of their organizations, each with its previous
 * position. Within a run of consecutive positions in the batch, the previous change is known
 * from the run itself; only an endpoint's first delivery after a break in the run reads the
 * feed (`previousChange`), and an endpoint of every type never does (it is the position before).
 */
export async function chainDeliveries(
  events: readonly PendingFanOut[],
  endpointsOf: (organizationId: string) => readonly ChainedEndpoint[],
  previousChange: PreviousChange,
): Promise<ChainLink[]> {
  const byOrganization = new Map<string, PendingFanOut[]>();
  for (const event of events) {
    const list = byOrganization.get(event.organizationId);
    if (list) list.push(event);
    else byOrganization.set(event.organizationId, [event]);
  }
  const links: ChainLink[] = [];
  for (const [organizationId, list] of byOrganization) {
    const endpoints = endpointsOf(organizationId);
    if (endpoints.length === 0) continue;
    list.sort((a, b) => a.position - b.position);
    /** By endpoint, its latest delivery in the current run; absent: look it up. */
    const last = new Map<string, number>();
    let before: number | undefined;
    for (const event of list) {
      if (before === undefined || event.position !== before + 1) last.clear();
      before = event.position;
      for (const endpoint of endpoints) {
        if (!delivers(endpoint, event.type)) continue;
        const previous =
          last.get(endpoint.id) ??
          (await lookUp(endpoint, organizationId, event.position, previousChange));
        last.set(endpoint.id, event.position);
        links.push({
          event,
          endpointId: endpoint.id,
          previousPosition: previous !== null && previous > endpoint.chainStart ? previous : null,
        });
      }
    }
  }
  return links;
}

function lookUp(
  endpoint: ChainedEndpoint,
  organizationId: string,
  position: number,
  previousChange: PreviousChange,
): Promise<number | null> | number | null {
  if (position - 1 <= endpoint.chainStart) return null;
  if (endpoint.types.has('*') && !endpoint.readable) return position - 1;
  const types = EVENT_TYPES.filter((type) => type !== 'ping' && delivers(endpoint, type));
  if (types.length === 0) return null;
  return previousChange(organizationId, types, position, endpoint.chainStart);
}
