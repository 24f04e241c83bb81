import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { EventsModule } from '../events/events.module';
import { OrganizationsModule } from '../organizations/organizations.module';
import { AccountRecord, OAuthArtifactRecord, OAuthClientRecord, UserRecord } from './entities';
import { OAuthClientsService } from './oauth-clients.service';
import { UsersService } from './users.service';

/** Users and OAuth clients: what both the server and the admin CLI manage. */
@Module({
  imports: [
    OrganizationsModule,
    EventsModule,
    TypeOrmModule.forFeature([AccountRecord, UserRecord, OAuthClientRecord, OAuthArtifactRecord]),
  ],
  providers: [UsersService, OAuthClientsService],
  exports: [UsersService, OAuthClientsService],
})
export class OAuthAccountsModule {}
