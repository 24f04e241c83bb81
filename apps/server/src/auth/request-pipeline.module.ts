import { type DynamicModule, Module, type Type } from '@nestjs/common';
import { OrganizationsModule } from '../organizations/organizations.module';
import { RateLimitModule } from '../rate-limit/rate-limit.module';
import { AuthModule } from './auth.module';
import { BearerStrategy } from './bearer.strategy';
import { RequestPipelineGuard } from './request-pipeline.guard';
import { TokenCache } from './token-cache';
import { OAuthAccessTokenResolver } from './token-resolver';

/** The server's request pipeline (authenticate → rate limit → scope) and its bearer strategy. */
@Module({})
export class RequestPipelineModule {
  /**
   * `oauthAccessTokens`: the OAuth module's resolver of its access tokens, passed in by the app
   * module so that auth never imports oauth (oauth depends on auth, not the other way round).
   */
  static forRoot(options: { oauthAccessTokens: Type<OAuthAccessTokenResolver> }): DynamicModule {
    return {
      module: RequestPipelineModule,
      imports: [AuthModule, OrganizationsModule, RateLimitModule],
      providers: [
        BearerStrategy,
        TokenCache,
        RequestPipelineGuard,
        { provide: OAuthAccessTokenResolver, useClass: options.oauthAccessTokens },
      ],
      exports: [BearerStrategy, RequestPipelineGuard],
    };
  }
}
