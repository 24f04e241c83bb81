import { Module } from '@nestjs/common';
import { ThrottlerModule } from '@nestjs/throttler';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/env';
import type { Redis } from 'ioredis';
import { REDIS } from '../redis/redis.module';
import { OrganizationThrottlerGuard } from './organization-throttler.guard';
import { RedisSlidingWindowStore } from './redis-sliding-window.store';
import { SlidingWindowStore } from './sliding-window.store';

@Module({
  imports: [
    ThrottlerModule.forRootAsync({
      inject: [APP_CONFIG, REDIS],
      useFactory: (config: AppConfig, redis: Redis | null) => ({
        // The limit per request comes from the caller's organization (see OrganizationThrottlerGuard).
        throttlers: [
          {
            name: 'default',
            ttl: config.rateLimit.windowMs,
            limit: config.rateLimit.defaultPerMinute,
          },
        ],
        // One port, two adapters: process memory, or Redis shared by every instance.
        storage:
          redis && config.redis
            ? new RedisSlidingWindowStore(redis, config.redis.prefix, config.rateLimit.windowMs)
            : new SlidingWindowStore(config.rateLimit.windowMs),
      }),
    }),
  ],
  providers: [OrganizationThrottlerGuard],
  exports: [ThrottlerModule, OrganizationThrottlerGuard],
})
export class RateLimitModule {}
