/**
 * Fewer delivery slots for an endpoint that keeps timing out: each attempt that ran into the
 * timeout halves its room (down to one slot), and any answer gives it all back. A hanging
 * endpoint holds each of its slots for the whole timeout, so without this a few of them fill
 * their organization's share and its healthy endpoints wait (issue 30). Kept per process: each
 * instance learns from the attempts it makes.
 */
export class EndpointPacing {
  /** Consecutive timed-out attempts, by endpoint; absent is none. */
  private readonly streaks = new Map<string, number>();

  /** After an attempt: timed out (no answer within the timeout), or answered in any way. */
  record(endpointId: string, timedOut: boolean): void {
    if (!timedOut) {
      this.streaks.delete(endpointId);
      return;
    }
    // Bounded: the map holds only endpoints that are timing out now.
    if (!this.streaks.has(endpointId) && this.streaks.size >= 10_000) this.streaks.clear();
    this.streaks.set(endpointId, Math.min(MAX_STREAK, (this.streaks.get(endpointId) ?? 0) + 1));
  }

  /** The endpoint's room out of `configured` (WEBHOOK_ENDPOINT_CONCURRENCY): at least one. */
  limit(endpointId: string, configured: number): number {
    const streak = this.streaks.get(endpointId) ?? 0;
    return Math.max(1, Math.floor(configured / 2 ** streak));
  }
}

/** Halvings past which nothing changes: 8 slots are 1 after three. */
const MAX_STREAK = 6;
