import { Global, Inject, Logger, Module, type OnApplicationShutdown } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/env';

/** The shared Redis connection, or null in the embedded deployment (no REDIS_URL). */
export const REDIS = Symbol('REDIS');

@Global()
@Module({
  providers: [
    {
      provide: REDIS,
      inject: [APP_CONFIG],
      useFactory: async (config: AppConfig): Promise<Redis | null> => {
        if (!config.redis) return null;
        // Loaded only in the scale-out deployment: the embedded one never pays for ioredis.
        const { createRedis, untilReady } = await import('./redis-client');
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
