import { Module } from '@nestjs/common';
import { PassportModule } from '@nestjs/passport';
import { TypeOrmModule } from '@nestjs/typeorm';
import { OrganizationsModule } from '../organizations/organizations.module';
import { BearerStrategy } from './bearer.strategy';
import { PersonalAccessToken } from './personal-access-token.entity';
import { TokensService } from './tokens.service';

@Module({
  imports: [PassportModule, OrganizationsModule, TypeOrmModule.forFeature([PersonalAccessToken])],
  providers: [TokensService, BearerStrategy],
  exports: [TokensService],
})
export class AuthModule {}
