import type { Logger } from '@nestjs/common';
import { Redis } from 'ioredis';

/**
 * Commands fail at once while Redis is unreachable (no offline queue), so callers fail closed
 * (a 503 from the rate limiter, an unready instance) instead of hanging; the client keeps
 * reconnecting in the background and everything recovers by itself when Redis returns.
 */
export function createRedis(url: string, logger: Logger, name: string): Redis {
  const client = new Redis(url, {
    connectionName: name,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    retryStrategy: (times) => Math.min(times * 100, 2000),
  });
  let lastLogged = 0;
  client.on('error', (error: Error) => {
    // Once per 10 s at most: a Redis outage must not flood the log (log pacing: system clock).
    if (Date.now() - lastLogged > 10_000) {
      lastLogged = Date.now();
      logger.error(`Redis (${name}): ${error.message}`);
    }
  });
  return client;
}

/** Waits up to `ms` for the first connection, so a healthy boot starts ready. */
export async function untilReady(client: Redis, ms: number): Promise<void> {
  if (client.status === 'ready') return;
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    client.once('ready', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}
