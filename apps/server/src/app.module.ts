import { type DynamicModule, Module, type Type } from '@nestjs/common';
import { APP_FILTER, APP_GUARD } from '@nestjs/core';
import { LoggerModule } from 'nestjs-pino';
import type { Logger } from 'pino';
import { AuditModule } from './audit/audit.module';
import { AuditPruner } from './audit/audit-pruner';
import { RequestLogPruner } from './request-logs/request-log-pruner';
import { RequestLogsModule } from './request-logs/request-logs.module';
import { AuthModule } from './auth/auth.module';
import { MemberOwnedModule } from './auth/member-owned.module';
import { RequestPipelineGuard } from './auth/request-pipeline.guard';
import { RequestPipelineModule } from './auth/request-pipeline.module';
import { type Clock, ClockModule } from './common/clock';
import { ProblemDetailsFilter } from './common/problem-details.filter';
import { ConfigModule } from './config/config.module';
import type { AppConfig } from './config/env';
import { DatabaseModule } from './database/database.module';
import { EventsModule } from './events/events.module';
import { DocsModule } from './docs/docs.module';
import { HealthModule } from './health/health.module';
import { IdempotencyModule } from './idempotency/idempotency.module';
import { OrganizationsModule } from './organizations/organizations.module';
import { RateLimitModule } from './rate-limit/rate-limit.module';
import { SandboxesModule } from './sandboxes/sandboxes.module';
import { SeedModule } from './seed/seed.module';
import { ExportsModule } from './exports/exports.module';
import { ImportsModule } from './imports/imports.module';
import { WebhooksModule } from './webhooks/webhooks.module';
import { RedisModule } from './redis/redis.module';
import { RESOURCE_MODULES } from './resources';
import { APP_SCHEMA } from './schema';
import { MetricsModule } from './metrics/metrics.module';
import { MembersModule } from './members/members.module';
import { OAuthModule } from './oauth/oauth.module';
import { OAuthAccessTokens } from './oauth/access-tokens.service';

@Module({})
export class AppModule {
  /** `extra`: modules only tests add, to serve a test contract through the real pipeline. */
  static forRoot(
    config: AppConfig,
    logger: Logger,
    extra: readonly (Type | DynamicModule)[] = [],
    clock?: Clock,
  ): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        ClockModule.forRoot(clock),
        LoggerModule.forRoot({
          // Nest's own logs go through this pino instance; per-request lines come from
          // requestLogMiddleware, so pino-http's per-request middleware is not mounted at all
          // (no routes). Excluding every path instead still ran Nest's middleware wrapper and a
          // path match on each request, ~2% of a list request's CPU.
          pinoHttp: { logger },
          forRoutes: [],
        }),
        DatabaseModule.forRoot(config, APP_SCHEMA),
        RedisModule,
        MetricsModule,
        EventsModule,
        AuditModule,
        OrganizationsModule,
        AuthModule,
        RequestPipelineModule.forRoot({ oauthAccessTokens: OAuthAccessTokens }),
        RateLimitModule,
        ...RESOURCE_MODULES,
        ExportsModule,
        ImportsModule,
        MemberOwnedModule,
        WebhooksModule,
        OAuthModule,
        MembersModule,
        RequestLogsModule,
        IdempotencyModule,
        SeedModule,
        SandboxesModule,
        HealthModule,
        DocsModule,
        ...extra,
      ],
      providers: [
        // Only the server prunes the audit log (the CLI's short-lived processes do not).
        AuditPruner,
        RequestLogPruner,
        // The one guard: authenticate → rate limit → scope, in that order, in one place.
        { provide: APP_GUARD, useExisting: RequestPipelineGuard },
        { provide: APP_FILTER, useClass: ProblemDetailsFilter },
      ],
    };
  }
}
