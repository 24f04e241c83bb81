import { Module } from '@nestjs/common';
import { ThrottlerModule } from '@nestjs/throttler';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/env';
import { SlidingWindowStore } from './sliding-window.store';

@Module({
  imports: [
    ThrottlerModule.forRootAsync({
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => ({
        // The limit per request comes from the caller's organization (see OrganizationThrottlerGuard).
        throttlers: [
          {
            name: 'default',
            ttl: config.rateLimit.windowMs,
            limit: config.rateLimit.defaultPerMinute,
          },
        ],
        storage: new SlidingWindowStore(config.rateLimit.windowMs),
      }),
    }),
  ],
  exports: [ThrottlerModule],
})
export class RateLimitModule {}
