/**
 * What acts for a member (tokens, OAuth clients and grants, webhook endpoints, invitations,
 * sessions): listed for the credentials endpoint and a removal's audit entry, and narrowed to
 * the member's new role on a demotion.
 */
import { type MemberCredentialsResource, type Role, ROLE_SCOPES } from '@platform/contract';
import { type EntityManager, In, IsNull, MoreThan } from 'typeorm';
import { PersonalAccessToken } from '../auth/personal-access-token.entity';
import type { Clock } from '../common/clock';
import { publicId } from '../common/ids';
import type { Sql } from '../database/sql';
import { OAuthClientRecord, type UserRecord } from '../oauth/entities';
import { memberArtifacts } from '../oauth/member-artifacts';
import { isPortalClient, PORTAL_CLIENT_NAME } from '../oauth/portal-client';
import { WebhookEndpointRecord } from '../webhooks/webhook-endpoint.entity';
import { InvitationRecord } from './invitation.entity';

/** What acts for a member: what removing them stops, and demoting them narrows. */
export async function memberCredentials(
  manager: EntityManager,
  sql: Sql,
  clock: Clock,
  user: UserRecord,
): Promise<MemberCredentialsResource> {
  const { organizationId } = user;
  const now = clock.now();
  const [tokens, clients, endpoints, invitations, artifacts] = await Promise.all([
    // By member alone: their tokens of the organization's sandboxes are theirs too, and die
    // with them (a member belongs to one organization, so this reaches no other tenant).
    manager.find(PersonalAccessToken, {
      where: { userId: user.id, revokedAt: IsNull() },
      order: { createdAt: 'ASC' },
    }),
    manager.find(OAuthClientRecord, {
      where: { organizationId, userId: user.id },
      order: { createdAt: 'ASC' },
    }),
    manager.find(WebhookEndpointRecord, {
      where: { organizationId, ownerUserId: user.id, enabled: true },
      order: { createdAt: 'ASC' },
    }),
    pendingInvitationsOf(manager, user, now),
    memberArtifacts(sql, manager, user.id),
  ]);
  const live = (a: { payload: { exp?: number } }) =>
    !a.payload.exp || a.payload.exp * 1000 > now.getTime();
  const approvedClientIds = [
    ...new Set(
      artifacts
        .filter((a) => a.kind === 'Grant' && live(a) && a.payload.clientId)
        .map((a) => a.payload.clientId!),
    ),
  ];
  const approved = approvedClientIds.length
    ? await manager.find(OAuthClientRecord, { where: { id: In(approvedClientIds) } })
    : [];
  return {
    object: 'member_credentials',
    member_id: publicId('user', user.id),
    personal_access_tokens: tokens
      .filter((t) => !t.expiresAt || t.expiresAt > now)
      .map((t) => ({ id: publicId('personal_access_token', t.id), name: t.name })),
    oauth_clients: clients.map((c) => ({ id: publicId('oauth_client', c.id), name: c.name })),
    authorized_apps: approvedClientIds.map((clientId) => ({
      client_id: publicId('oauth_client', clientId),
      name:
        approved.find((c) => c.id === clientId)?.name ??
        (isPortalClient(clientId) ? PORTAL_CLIENT_NAME : clientId),
    })),
    webhook_endpoints: endpoints.map((e) => ({
      id: publicId('webhook_endpoint', e.id),
      url: e.url,
    })),
    invitations: invitations.map((i) => ({
      id: publicId('invitation', i.id),
      email: i.email,
      role: i.role,
    })),
    sessions: artifacts.filter((a) => a.kind === 'Session' && live(a)).length,
  };
}

/**
 * A demotion narrows what acts for the member to the new role (api.md, "Membership"): tokens
 * and grants are cut to it on each request already (`effectiveScopes`); the OAuth clients they
 * registered are cut to it here, their webhook endpoints deliver only what it may read (at the
 * next fan-out), and their pending invitations for a role it cannot give are revoked. Returns
 * what was cut, for the audit entry, or null when nothing was.
 */
export async function narrowMemberTo(
  manager: EntityManager,
  clock: Clock,
  user: UserRecord,
  role: Role,
): Promise<Record<string, unknown> | null> {
  const allowed = new Set<string>(ROLE_SCOPES[role]);
  const clients = await manager.find(OAuthClientRecord, {
    where: { organizationId: user.organizationId, userId: user.id },
  });
  const now = clock.now();
  const cut: { id: string; scopes: string[] }[] = [];
  for (const client of clients) {
    const scopes = client.scopes.split(' ');
    const kept = scopes.filter((scope) => allowed.has(scope));
    if (kept.length === scopes.length) continue;
    await manager.update(
      OAuthClientRecord,
      { id: client.id },
      { scopes: kept.join(' '), updatedAt: now },
    );
    cut.push({ id: client.id, scopes: scopes.filter((scope) => !allowed.has(scope)) });
  }
  const invitations = await revokeInvitationsOf(
    manager,
    user,
    (invitation) => ROLE_SCOPES[invitation.role].some((scope) => !allowed.has(scope)),
    now,
  );
  if (cut.length === 0 && invitations.length === 0) return null;
  return { oauth_clients: cut, invitations };
}

/** Revokes the member's pending invitations that `which` picks; returns their ids. */
export async function revokeInvitationsOf(
  manager: EntityManager,
  user: UserRecord,
  which: (invitation: InvitationRecord) => boolean,
  now: Date,
): Promise<string[]> {
  const pending = await pendingInvitationsOf(manager, user, now);
  const revoked = pending.filter(which).map((i) => i.id);
  if (revoked.length) {
    await manager.update(
      InvitationRecord,
      { id: In(revoked), acceptedAt: IsNull(), revokedAt: IsNull() },
      { revokedAt: now, expiresAt: now, updatedAt: now },
    );
  }
  return revoked;
}

/** The invitations the member sent that can still be accepted, oldest first. */
export function pendingInvitationsOf(
  manager: EntityManager,
  user: UserRecord,
  now: Date,
): Promise<InvitationRecord[]> {
  return manager.find(InvitationRecord, {
    where: {
      organizationId: user.organizationId,
      invitedByUserId: user.id,
      acceptedAt: IsNull(),
      revokedAt: IsNull(),
      expiresAt: MoreThan(now),
    },
    order: { createdAt: 'ASC' },
  });
}
