import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { OrganizationsModule } from '../organizations/organizations.module';
import { PersonalAccessToken } from './personal-access-token.entity';
import { PersonalAccessTokensController, TokenController } from './tokens.controller';
import { TokensService } from './tokens.service';

/** Personal access tokens: what both the server and the admin CLI manage. */
@Module({
  imports: [OrganizationsModule, TypeOrmModule.forFeature([PersonalAccessToken])],
  controllers: [PersonalAccessTokensController, TokenController],
  providers: [TokensService],
  exports: [TokensService],
})
export class AuthModule {}
