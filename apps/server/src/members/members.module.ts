import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { EventsModule } from '../events/events.module';
import { MailModule } from '../mail/mail.module';
import { AccountRecord, UserRecord } from '../oauth/entities';
import { OAuthAccountsModule } from '../oauth/oauth-accounts.module';
import { RateLimitModule } from '../rate-limit/rate-limit.module';
import { AcceptInvitationPages } from './accept-pages';
import { InvitationRecord } from './invitation.entity';
import { InvitationsController, MembersController, UserController } from './members.controller';
import { InvitationsService } from './invitations.service';
import { EmailChangePages } from './email-change-pages';
import { EmailChangesService } from './email-changes.service';
import { MembersService } from './members.service';
import { PasswordResetPages } from './password-reset-pages';
import { PasswordResetsService } from './password-resets.service';
import { UserSessionsService } from './user-sessions.service';

/** Members and their roles, invitations and their accept page, password resets, `/v1/user` and its sessions. */
@Module({
  imports: [
    OAuthAccountsModule,
    EventsModule,
    MailModule,
    RateLimitModule,
    TypeOrmModule.forFeature([AccountRecord, UserRecord, InvitationRecord]),
  ],
  controllers: [MembersController, InvitationsController, UserController],
  providers: [
    MembersService,
    InvitationsService,
    AcceptInvitationPages,
    PasswordResetsService,
    PasswordResetPages,
    EmailChangesService,
    EmailChangePages,
    UserSessionsService,
  ],
  exports: [MembersService, AcceptInvitationPages, PasswordResetPages, EmailChangePages],
})
export class MembersModule {}
