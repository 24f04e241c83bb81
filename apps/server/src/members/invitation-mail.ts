import type { EntityManager } from 'typeorm';
import type { MailOutbox } from '../mail/mail-outbox';
import { invitationMail } from '../mail/mail-templates';
import { UserRecord } from '../oauth/entities';
import { Organization } from '../organizations/organization.entity';
import type { InvitationRecord } from './invitation.entity';

/**
 * Queues the invitation's mail in the transaction that makes it: the organization's name, the
 * inviter as the organization knows them, the role and the one-time link.
 */
export async function queueInvitationMail(
  manager: EntityManager,
  outbox: MailOutbox,
  invitation: InvitationRecord,
  acceptUrl: string,
): Promise<void> {
  const organization = await manager.findOneByOrFail(Organization, {
    id: invitation.organizationId,
  });
  const inviter = invitation.invitedByUserId
    ? await manager.findOneBy(UserRecord, {
        id: invitation.invitedByUserId,
        organizationId: invitation.organizationId,
      })
    : null;
  await outbox.enqueue(manager, {
    organizationId: invitation.organizationId,
    kind: 'invitation',
    recipient: invitation.email,
    ...invitationMail({
      organizationName: organization.name,
      inviter: inviter ? inviter.name || inviter.email : null,
      role: invitation.role,
      acceptUrl,
      expiresAt: invitation.expiresAt,
    }),
  });
}
