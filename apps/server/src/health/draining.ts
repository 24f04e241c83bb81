import { Injectable } from '@nestjs/common';

/**
 * Whether the process is shutting down (`shutdown.ts`): readiness answers 503 so a load balancer
 * stops sending traffic, and each response asks its client to close the connection. Work that
 * would hold a request open (a change feed read waiting for a change) ends on `onDrain`, so the
 * requests in flight finish within the shutdown grace.
 */
@Injectable()
export class Draining {
  active = false;
  private readonly listeners: (() => void)[] = [];

  /** Starts draining, once; listeners must not throw. */
  begin(): void {
    if (this.active) return;
    this.active = true;
    for (const listener of this.listeners) listener();
  }

  onDrain(listener: () => void): void {
    this.listeners.push(listener);
  }
}
