import { Module } from '@nestjs/common';
import { PassportModule } from '@nestjs/passport';
import { TypeOrmModule } from '@nestjs/typeorm';
import { OrganizationsModule } from '../organizations/organizations.module';
import { BearerStrategy } from './bearer.strategy';
import { OAuthTokensService } from './oauth-tokens.service';
import { PersonalAccessToken } from './personal-access-token.entity';
import { PersonalAccessTokensController, TokenController } from './tokens.controller';
import { TokensService } from './tokens.service';

@Module({
  imports: [PassportModule, OrganizationsModule, TypeOrmModule.forFeature([PersonalAccessToken])],
  controllers: [PersonalAccessTokensController, TokenController],
  providers: [TokensService, OAuthTokensService, BearerStrategy],
  exports: [TokensService, BearerStrategy],
})
export class AuthModule {}
