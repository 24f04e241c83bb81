import { Module } from '@nestjs/common';
import { OrganizationsModule } from '../organizations/organizations.module';
import { RateLimitModule } from '../rate-limit/rate-limit.module';
import { InteractionPages } from './interactions';
import { OAuthAccountsModule } from './oauth-accounts.module';
import { OAuthClientsController } from './oauth-clients.controller';
import { OAuthProviderService } from './oauth-provider.service';

/** The authorization server, its login and consent pages, and the OAuth clients API. */
@Module({
  imports: [OAuthAccountsModule, OrganizationsModule, RateLimitModule],
  controllers: [OAuthClientsController],
  providers: [OAuthProviderService, InteractionPages],
  exports: [OAuthProviderService, InteractionPages],
})
export class OAuthModule {}
