import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { EventsModule } from '../events/events.module';
import { MailModule } from '../mail/mail.module';
import { UserRecord } from '../oauth/entities';
import { OAuthAccountsModule } from '../oauth/oauth-accounts.module';
import { AcceptInvitationPages } from './accept-pages';
import { InvitationRecord } from './invitation.entity';
import { InvitationsController, MembersController, UserController } from './members.controller';
import { InvitationsService } from './invitations.service';
import { MembersService } from './members.service';

/** Members and their roles, invitations and their accept page, and `/v1/user`. */
@Module({
  imports: [
    OAuthAccountsModule,
    EventsModule,
    MailModule,
    TypeOrmModule.forFeature([UserRecord, InvitationRecord]),
  ],
  controllers: [MembersController, InvitationsController, UserController],
  providers: [MembersService, InvitationsService, AcceptInvitationPages],
  exports: [MembersService, AcceptInvitationPages],
})
export class MembersModule {}
