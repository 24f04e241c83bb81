import { type DynamicModule, Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module';
import { AuthModule } from '../auth/auth.module';
import { MemberOwnedModule } from '../auth/member-owned.module';
import { ClockModule } from '../common/clock';
import { ConfigModule } from '../config/config.module';
import type { AppConfig } from '../config/env';
import { DatabaseModule } from '../database/database.module';
import { EventsModule } from '../events/events.module';
import { IdempotencyModule } from '../idempotency/idempotency.module';
import { OAuthAccountsModule } from '../oauth/oauth-accounts.module';
import { OrganizationsModule } from '../organizations/organizations.module';
import { APP_SCHEMA } from '../schema';
import { SeedModule } from '../seed/seed.module';
import { RedisModule } from '../redis/redis.module';

/** The services the admin CLI needs, on the same DataSource definition as the server. */
@Module({})
export class CliModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: CliModule,
      imports: [
        ConfigModule.forRoot(config),
        ClockModule.forRoot(),
        DatabaseModule.forRoot(config, APP_SCHEMA),
        // The change feed (in EventsModule) takes the Redis connection, null when none is set.
        RedisModule,
        EventsModule,
        AuditModule,
        OrganizationsModule,
        AuthModule,
        SeedModule,
        OAuthAccountsModule,
        MemberOwnedModule,
        // The modules above declare controllers, whose POST routes take IdempotencyInterceptor.
        IdempotencyModule,
      ],
    };
  }
}
