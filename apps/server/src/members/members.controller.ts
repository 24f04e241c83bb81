import { Controller } from '@nestjs/common';
import { contract, type InvitationWithSecretSchema } from '@platform/contract';
import type { z } from 'zod';
import { tsRestHandler } from '@ts-rest/nest';
import { ApiHandler } from '../common/api-handler';
import { type ApiAuditActor, CurrentAuditActor } from '../audit/audit-actor';
import type { Principal } from '../common/principal';
import type { PageUrl } from '../common/list/page-envelope';
import { CurrentPageUrl } from '../common/page-url.decorator';
import { notFound } from '../common/resource-errors';
import { publicId } from '../common/ids';
import { toIso } from '../common/timestamp';
import { CurrentPrincipal } from '../common/request-context';
import { deletedStub, listHandler, onRecord } from '../common/resource-handlers';
import { isPortalClient } from '../oauth/portal-client';
import { UsersService } from '../oauth/users.service';
import { TransactionRunner } from '../common/transactions';
import { AuditService } from '../audit/audit.service';
import type { InvitationRecord } from './invitation.entity';
import { InvitationsService, toInvitationResource } from './invitations.service';
import { EmailChangesService } from './email-changes.service';
import { MembersService, toMemberResource } from './members.service';
import { UserSessionsService } from './user-sessions.service';

@Controller()
export class MembersController {
  constructor(private readonly members: MembersService) {}

  @ApiHandler(contract.members)
  handle(
    @CurrentPrincipal() principal: Principal,
    @CurrentPageUrl() url: PageUrl,
    @CurrentAuditActor() actor: ApiAuditActor,
  ) {
    const organizationId = principal.organizationId;
    return tsRestHandler(contract.members, {
      list: listHandler(this.members, organizationId, url),
      retrieve: onRecord(200, async (id) =>
        toMemberResource(await this.members.retrieve(organizationId, id)),
      ),
      update: async ({ params, body }) => ({
        status: 200,
        body: toMemberResource(await this.members.update(principal, params.id, body, actor)),
      }),
      delete: deletedStub('member', 'user', (id) => this.members.remove(principal, id, actor)),
      credentials: onRecord(200, (id) => this.members.credentials(organizationId, id)),
    });
  }
}

@Controller()
export class InvitationsController {
  constructor(private readonly invitations: InvitationsService) {}

  @ApiHandler(contract.invitations)
  handle(
    @CurrentPrincipal() principal: Principal,
    @CurrentPageUrl() url: PageUrl,
    @CurrentAuditActor() actor: ApiAuditActor,
  ) {
    const organizationId = principal.organizationId;
    return tsRestHandler(contract.invitations, {
      list: async ({ query }) => ({
        status: 200,
        body: await this.invitations.list(organizationId, query, url),
      }),
      create: async ({ body }) => ({
        status: 201,
        body: withLink(await this.invitations.invite(principal, body, actor)),
      }),
      resend: onRecord(200, async (id) =>
        withLink(await this.invitations.resend(principal, id, actor)),
      ),
      retrieve: onRecord(200, async (id) =>
        toInvitationResource(await this.invitations.retrieve(organizationId, id)),
      ),
      delete: deletedStub('invitation', 'invitation', (id) =>
        this.invitations.revoke(organizationId, id, actor),
      ),
    });
  }
}

/** `/v1/user`: the member the calling token acts for (the guard refuses a token without one). */
@Controller()
export class UserController {
  constructor(
    private readonly members: MembersService,
    private readonly users: UsersService,
    private readonly audit: AuditService,
    private readonly transactions: TransactionRunner,
    private readonly emailChanges: EmailChangesService,
    private readonly sessions: UserSessionsService,
  ) {}

  /**
   * The calling member with their account. The person's other organizations are for their own
   * portal session; a token an app or an integration holds is one membership's, and learns of
   * no other.
   */
  private async me(principal: Principal, userId: string) {
    const user = await this.members.retrieve(principal.organizationId, userId).catch(() => {
      throw notFound('member', userId);
    });
    const own = principal.kind === 'oauth_access_token' && isPortalClient(principal.clientId);
    const memberships = own ? await this.users.usersOf(user.accountId) : [user];
    const organizations = await this.members.organizationNames(
      memberships.map((m) => m.organizationId),
    );
    return {
      ...toMemberResource(user),
      account_id: publicId('account', user.accountId),
      memberships: memberships.map((m) => ({
        organization_id: publicId('organization', m.organizationId),
        organization_name: organizations.get(m.organizationId) ?? '',
        role: m.role,
        member_id: publicId('user', m.id),
      })),
    };
  }

  @ApiHandler(contract.user)
  handle(@CurrentPrincipal() principal: Principal, @CurrentAuditActor() actor: ApiAuditActor) {
    const userId = principal.userId ?? '';
    const entry = (action: 'user.password_changed' | 'user.password_check_failed') => ({
      action,
      targetType: 'user' as const,
      targetId: userId,
    });
    return tsRestHandler(contract.user, {
      retrieve: async () => ({ status: 200, body: await this.me(principal, userId) }),
      changePassword: async ({ body }) => {
        await this.users.changePassword(userId, body.current_password, body.new_password, {
          keepGrantId: principal.kind === 'oauth_access_token' ? principal.grantId : null,
          changed: (manager) => this.audit.record(actor, entry('user.password_changed'), manager),
          // Kept although the request fails: written once its transaction has ended.
          failed: () =>
            this.transactions.afterwards((manager) =>
              this.audit.record(actor, entry('user.password_check_failed'), manager),
            ),
        });
        return { status: 204, body: undefined };
      },
      changeEmail: async ({ body }) => {
        const { email, expiresAt, confirmUrl } = await this.emailChanges.request(userId, body, () =>
          this.transactions.afterwards((manager) =>
            this.audit.record(actor, entry('user.password_check_failed'), manager),
          ),
        );
        return {
          status: 202,
          body: {
            object: 'email_change' as const,
            email,
            delivery: confirmUrl ? ('link' as const) : ('email' as const),
            confirm_url: confirmUrl,
            expires_at: toIso(expiresAt),
          },
        };
      },
      listSessions: async () => ({
        status: 200,
        body: { object: 'user_sessions' as const, data: await this.sessions.list(principal) },
      }),
      revokeSession: async ({ params }) => {
        await this.sessions.revoke(principal, params.id, actor);
        return {
          status: 200,
          body: { id: params.id, object: 'session' as const, deleted: true as const },
        };
      },
      signOutOtherSessions: async () => ({
        status: 200,
        body: {
          object: 'user_sessions' as const,
          data: await this.sessions.signOutOthers(principal, actor),
        },
      }),
    });
  }
}

/** An invitation just made or renewed, with its link unless it went out by mail. */
function withLink({
  invitation,
  acceptUrl,
}: {
  invitation: InvitationRecord;
  acceptUrl: string | null;
}): z.infer<typeof InvitationWithSecretSchema> {
  const delivery = acceptUrl === null ? ('email' as const) : ('link' as const);
  return { ...toInvitationResource(invitation), accept_url: acceptUrl, delivery };
}
