import { Injectable } from '@nestjs/common';

/**
 * Whether the process is shutting down (`shutdown.ts`): readiness answers 503 so a load balancer
 * stops sending traffic, and each response asks its client to close the connection.
 */
@Injectable()
export class Draining {
  active = false;
}
