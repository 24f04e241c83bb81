import { Global, Inject, Logger, Module, type OnApplicationShutdown } from '@nestjs/common';
import { Redis } from 'ioredis';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/env';

/** The shared Redis connection, or null in the embedded deployment (no REDIS_URL). */
export const REDIS = Symbol('REDIS');

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

@Global()
@Module({
  providers: [
    {
      provide: REDIS,
      inject: [APP_CONFIG],
      useFactory: async (config: AppConfig): Promise<Redis | null> => {
        if (!config.redis) return null;
        const client = createRedis(config.redis.url, new Logger('Redis'), 'platform-api');
        await untilReady(client, 5000);
        return client;
      },
    },
  ],
  exports: [REDIS],
})
export class RedisModule implements OnApplicationShutdown {
  constructor(@Inject(REDIS) private readonly redis: Redis | null) {}

  async onApplicationShutdown(): Promise<void> {
    if (!this.redis) return;
    // QUIT fails at once when Redis is unreachable (no offline queue); then just drop the socket.
    await this.redis.quit().catch(() => this.redis?.disconnect());
  }
}
