import { randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import {
  contract,
  INVITATION_TTL_DAYS,
  type InvitationResource,
  type ListQuery,
  type MemberCredentialsResource,
  type MemberResource,
  type Role,
  ROLE_SCOPES,
} from '@platform/contract';
import { type EntityManager, In, IsNull, MoreThan, type Repository } from 'typeorm';
import type { AuditActor } from '../audit/audit-actor';
import { AuditService } from '../audit/audit.service';
import { normalizeIp } from '../rate-limit/organization-throttler.guard';
import { earlierExpiry } from '../auth/delegation';
import type { Principal } from '../common/principal';
import { revokeTokensOf } from '../auth/tokens.service';
import { Clock } from '../common/clock';
import { newId, publicId } from '../common/ids';
import { ListCollection, type ListOptions } from '../common/list/find-page';
import { pageEnvelope, type PageUrl } from '../common/list/page-envelope';
import { ProblemException } from '../common/problem.exception';
import { findOwned } from '../common/find-owned';
import { alreadyExists, invalidField } from '../common/resource-errors';
import { toIso } from '../common/timestamp';
import { TransactionRunner } from '../common/transactions';
import { APP_CONFIG } from '../config/config.module';
import { type AppConfig, serverOrigin } from '../config/env';
import { CredentialRevocations } from '../common/credential-revocations';
import { Sql } from '../database/sql';
import { hashToken } from '../security/crypto';
import { OAuthArtifactRecord, OAuthClientRecord, UserRecord } from '../oauth/entities';
import { revokeClientArtifacts } from '../oauth/adapter';
import { deleteArtifacts, memberArtifacts } from '../oauth/member-artifacts';
import { normalizeEmail, UsersService } from '../oauth/users.service';
import { WebhookEndpointRecord } from '../webhooks/webhook-endpoint.entity';
import { MailOutbox } from '../mail/mail-outbox';
import { InvitationRecord } from './invitation.entity';
import { queueInvitationMail } from './invitation-mail';
import { memberCredentials, narrowMemberTo, revokeInvitationsOf } from './member-credentials';

const INVITATION_TTL_MS = INVITATION_TTL_DAYS * 24 * 3600 * 1000;

/** Where an invitee opens their link (server-rendered, see `accept-pages.ts`). */
export const ACCEPT_PATH = '/invitations/accept';

/** `invt_` + 32 random bytes (base64url): the one-time secret in the accept link. */
function newInvitationToken(): string {
  return `invt_${randomBytes(32).toString('base64url')}`;
}

/** Why an accept link no longer works, or null when it does. */
export function invitationEnded(
  invitation: InvitationRecord | null,
  now: Date,
): 'unknown' | 'used' | 'revoked' | 'expired' | null {
  if (!invitation) return 'unknown';
  if (invitation.acceptedAt) return 'used';
  if (invitation.revokedAt) return 'revoked';
  if (invitation.expiresAt.getTime() <= now.getTime()) return 'expired';
  return null;
}

@Injectable()
export class MembersService {
  private readonly listedMembers: ListCollection<UserRecord>;
  private readonly listedInvitations: ListCollection<InvitationRecord>;
  /** How long a `q` search may take (`SEARCH_TIMEOUT`). */
  private readonly listOptions: ListOptions;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectRepository(UserRecord) private readonly users: Repository<UserRecord>,
    @InjectRepository(InvitationRecord) private readonly invitations: Repository<InvitationRecord>,
    private readonly accounts: UsersService,
    private readonly tx: TransactionRunner,
    private readonly audit: AuditService,
    private readonly sql: Sql,
    private readonly clock: Clock,
    private readonly revocations: CredentialRevocations,
    private readonly outbox: MailOutbox,
  ) {
    this.listOptions = { searchTimeoutMs: config.searchTimeoutMs };
    this.listedMembers = ListCollection.of(sql, users, contract.members.list.query);
    // `expires_at`: the list shows pending invitations only, a condition the service adds.
    this.listedInvitations = ListCollection.of(sql, invitations, contract.invitations.list.query, {
      expires_at: 'expires_at',
    });
  }

  // ------------------------------------------------------------------ members

  async list(organizationId: string, query: ListQuery, url: PageUrl) {
    const { rows, total } = await this.listedMembers.find(organizationId, query, this.listOptions);
    return { data: rows.map(toMemberResource), ...pageEnvelope(url, query, total) };
  }

  retrieve(organizationId: string, id: string): Promise<UserRecord> {
    return findOwned(this.users.manager, UserRecord, organizationId, id, 'member');
  }

  async update(
    principal: Principal,
    id: string,
    changes: { role?: Role | undefined; name?: string | null | undefined },
    actor: AuditActor,
  ): Promise<UserRecord> {
    const organizationId = principal.organizationId;
    if (changes.role) assertCanGrantRole(principal, changes.role);
    return this.tx.run(async (manager) => {
      await this.lockAdmins(manager, organizationId);
      const user = await findOwned(manager, UserRecord, organizationId, id, 'member');
      // Changing a member takes holding what they hold: no demoting someone above you.
      if (changes.role && changes.role !== user.role) assertCanGrantRole(principal, user.role);
      let changed = false;
      if (changes.role && changes.role !== user.role) {
        if (user.role === 'admin') await this.assertNotLastAdmin(manager, user, 'demote');
        const narrowed = await narrowMemberTo(manager, this.clock, user, changes.role);
        // The entry names what the new role cut back, if anything.
        await this.audit.record(
          actor,
          {
            action: 'member.role_changed',
            targetType: 'user',
            targetId: publicId('user', user.id),
            changes: { role: [user.role, changes.role], ...(narrowed && { narrowed }) },
          },
          manager,
        );
        user.role = changes.role;
        changed = true;
      }
      if (changes.name !== undefined) {
        const name = changes.name?.trim() || null;
        if (name !== user.name) {
          await this.audit.record(
            actor,
            {
              action: 'member.updated',
              targetType: 'user',
              targetId: publicId('user', user.id),
              changes: { name: [user.name, name] },
            },
            manager,
          );
          user.name = name;
          changed = true;
        }
      }
      if (changed) {
        user.updatedAt = this.clock.now();
        await manager.update(
          UserRecord,
          { id },
          { role: user.role, name: user.name, updatedAt: user.updatedAt },
        );
      }
      return user;
    });
  }

  /**
   * Removes a member and everything that acts for them, in one transaction (api.md,
   * "Membership"): their personal access tokens are revoked (kept, for the record), the OAuth
   * clients they registered deleted with every token issued to them, every OAuth artifact of
   * theirs (grants, tokens, codes, sign-in sessions) deleted, their webhook endpoints disabled
   * and their pending invitations revoked. What an admin transferred to another member first
   * is no longer theirs and stays. The bearer check and delivery refuse anything of a member who
   * is gone in any case, so nothing of theirs works on the next request or delivery.
   */
  async remove(principal: Principal, id: string, actor: AuditActor): Promise<void> {
    const organizationId = principal.organizationId;
    await this.tx.run(async (manager) => {
      await this.lockAdmins(manager, organizationId);
      const user = await findOwned(manager, UserRecord, organizationId, id, 'member');
      assertCanGrantRole(principal, user.role);
      if (user.role === 'admin') await this.assertNotLastAdmin(manager, user, 'remove');
      const now = this.clock.now();
      const held = await memberCredentials(manager, this.sql, this.clock, user);
      await revokeTokensOf(this.revocations, manager, user.id, now);
      const clientIds = held.oauth_clients.map((client) => client.id);
      if (clientIds.length) {
        await manager.delete(OAuthClientRecord, { id: In(clientIds), organizationId });
        await revokeClientArtifacts(manager.getRepository(OAuthArtifactRecord), clientIds);
      }
      for (const id of clientIds) {
        await this.revocations.revoked(manager, { type: 'oauth_client', id }, now);
      }
      await deleteArtifacts(manager, await memberArtifacts(this.sql, manager, user.id));
      await manager.update(
        WebhookEndpointRecord,
        { organizationId, ownerUserId: user.id, enabled: true },
        { enabled: false, disabledReason: 'member_removed', updatedAt: now },
      );
      await revokeInvitationsOf(manager, user, () => true, now);
      await manager.delete(UserRecord, { id: user.id, organizationId });
      await this.audit.record(
        actor,
        {
          action: 'member.removed',
          targetType: 'user',
          targetId: publicId('user', user.id),
          changes: { email: user.email, role: user.role, revoked: summary(held) },
        },
        manager,
      );
    });
  }

  /** What acts for a member: what removing them stops, and demoting them narrows. */
  async credentials(organizationId: string, id: string): Promise<MemberCredentialsResource> {
    const user = await this.retrieve(organizationId, id);
    return memberCredentials(this.users.manager, this.sql, this.clock, user);
  }

  /** PostgreSQL: serialises role changes and removals of one organization's admins. */
  private async lockAdmins(manager: EntityManager, organizationId: string): Promise<void> {
    if (this.sql.dialect !== 'postgres') return;
    const { sql } = this;
    await sql.query(
      manager,
      `SELECT ${sql.column(UserRecord, 'id')} FROM ${sql.table(UserRecord)}
       WHERE ${sql.column(UserRecord, 'organizationId')} = :organizationId
         AND ${sql.column(UserRecord, 'role')} = :role${sql.lockRows()}`,
      { organizationId, role: 'admin' },
    );
  }

  private async assertNotLastAdmin(
    manager: EntityManager,
    user: UserRecord,
    action: 'remove' | 'demote',
  ): Promise<void> {
    const admins = await manager.countBy(UserRecord, {
      organizationId: user.organizationId,
      role: 'admin',
    });
    if (admins <= 1) {
      throw new ProblemException(
        'conflict',
        `${user.email} is the organization's last admin and cannot be ${action === 'remove' ? 'removed' : 'given another role'}: make another member an admin first`,
      );
    }
  }

  // ------------------------------------------------------------------ invitations

  async listInvitations(organizationId: string, query: ListQuery, url: PageUrl) {
    // Pending only: an accepted or revoked invitation's expiry is set to when that happened.
    const pending: ListQuery = {
      ...query,
      conditions: [...query.conditions, { field: 'expires_at', op: 'gt', value: this.clock.now() }],
    };
    const { rows, total } = await this.listedInvitations.find(
      organizationId,
      pending,
      this.listOptions,
    );
    return { data: rows.map(toInvitationResource), ...pageEnvelope(url, query, total) };
  }

  retrieveInvitation(organizationId: string, id: string): Promise<InvitationRecord> {
    const { manager } = this.invitations;
    return findOwned(manager, InvitationRecord, organizationId, id, 'invitation');
  }

  /**
   * Mails the accept link to the invitee when this server sends mail (the admin never sees it,
   * so nobody but the address's owner can accept); otherwise returns it in clear text exactly
   * once. Only its token's hash is kept.
   */
  async invite(
    principal: Principal,
    input: { email: string; role: Role; expires_at?: string | null | undefined },
    actor: AuditActor,
  ): Promise<{ invitation: InvitationRecord; acceptUrl: string | null }> {
    assertCanGrantRole(principal, input.role);
    const now = this.clock.now();
    const latest = new Date(now.getTime() + INVITATION_TTL_MS);
    let expiresAt = earlierExpiry(latest, principal.expiresAt)!;
    if (input.expires_at) {
      const requested = new Date(input.expires_at);
      if (requested.getTime() <= now.getTime())
        throw invalidField('expires_at', 'must be in the future');
      if (requested.getTime() > expiresAt.getTime()) {
        throw invalidField(
          'expires_at',
          `must be at or before ${toIso(expiresAt)}: an invitation lasts at most ${INVITATION_TTL_DAYS} days, and no longer than the calling token`,
        );
      }
      expiresAt = requested;
    }
    const email = normalizeEmail(input.email);
    // Only this organization's members are looked at: whether an email has an account in
    // another organization is not the inviter's to learn (accepting would then fail, 409).
    if (await this.users.existsBy({ email, organizationId: principal.organizationId })) {
      throw alreadyExists('email', `${email} is already a member`);
    }
    const token = newInvitationToken();
    const invitation = this.invitations.create({
      id: newId('invitation', now.getTime()),
      organizationId: principal.organizationId,
      email,
      role: input.role,
      tokenHash: hashToken(token),
      invitedByUserId: principal.userId,
      expiresAt,
      acceptedAt: null,
      revokedAt: null,
      createdAt: now,
      updatedAt: now,
    });
    const acceptUrl = `${serverOrigin(this.config)}${ACCEPT_PATH}?token=${encodeURIComponent(token)}`;
    const mailed = this.outbox.sends;
    await this.audit.insertAudited(
      InvitationRecord,
      invitation,
      actor,
      {
        action: 'invitation.created',
        targetType: 'invitation',
        targetId: invitation.id,
        changes: { email, role: input.role, expires_at: toIso(expiresAt) },
      },
      mailed
        ? (manager) => queueInvitationMail(manager, this.outbox, invitation, acceptUrl)
        : undefined,
    );
    return { invitation, acceptUrl: mailed ? null : acceptUrl };
  }

  async revokeInvitation(
    organizationId: string,
    id: string,
    actor: AuditActor,
  ): Promise<InvitationRecord> {
    const invitation = await this.retrieveInvitation(organizationId, id);
    if (!invitationEnded(invitation, this.clock.now())) {
      const now = this.clock.now();
      await this.tx.run(async (manager) => {
        // Only a still-pending invitation: one accepted meanwhile stays accepted.
        const revoked = await manager.update(
          InvitationRecord,
          { id, organizationId, acceptedAt: IsNull(), revokedAt: IsNull() },
          { revokedAt: now, expiresAt: now, updatedAt: now },
        );
        if (!revoked.affected) return;
        invitation.revokedAt = now;
        invitation.expiresAt = now;
        await this.audit.record(
          actor,
          { action: 'invitation.revoked', targetType: 'invitation', targetId: id },
          manager,
        );
      });
    }
    return invitation;
  }

  /** The invitation behind an accept link, whatever its state (the page explains it). */
  findByToken(token: string): Promise<InvitationRecord | null> {
    if (!token || token.length > 200) return Promise.resolve(null);
    return this.invitations.findOneBy({ tokenHash: hashToken(token) });
  }

  /**
   * Makes the invitee a member with the invited role and ends the invitation, in one
   * transaction; the update only succeeds on a still-pending invitation, so a link raced
   * twice makes one member.
   */
  async accept(
    token: string,
    input: { password: string; name: string },
    ip?: string,
  ): Promise<{ ok: true; user: UserRecord } | { ok: false; reason: string }> {
    const found = await this.findByToken(token);
    const ended = invitationEnded(found, this.clock.now());
    if (ended || !found) return { ok: false, reason: ended ?? 'unknown' };
    return this.tx.run(async (manager) => {
      const now = this.clock.now();
      // The inviter must still be a member who may give the role: an invitation does not
      // outlive its maker's access (removal and demotion revoke it; this closes any race).
      if (found.invitedByUserId) {
        const inviter = await manager.findOneBy(UserRecord, {
          id: found.invitedByUserId,
          organizationId: found.organizationId,
        });
        const allowed = new Set<string>(inviter ? ROLE_SCOPES[inviter.role] : []);
        if (!inviter || ROLE_SCOPES[found.role].some((scope) => !allowed.has(scope))) {
          return { ok: false as const, reason: 'revoked' };
        }
      }
      const claimed = await manager.update(
        InvitationRecord,
        { id: found.id, acceptedAt: IsNull(), revokedAt: IsNull(), expiresAt: MoreThan(now) },
        { acceptedAt: now, expiresAt: now, updatedAt: now },
      );
      if (!claimed.affected) return { ok: false as const, reason: 'used' };
      const { user } = await this.accounts.create(
        {
          organizationId: found.organizationId,
          email: found.email,
          password: input.password,
          role: found.role,
          name: input.name,
        },
        manager,
      );
      // The invitee's own act: the link is the credential, the new member the user.
      const actor: AuditActor = {
        kind: 'invitation',
        organizationId: found.organizationId,
        credentialId: found.id,
        userId: user.id,
        ip: ip ? normalizeIp(ip) : null,
      };
      await this.audit.record(
        actor,
        { action: 'invitation.accepted', targetType: 'invitation', targetId: found.id },
        manager,
      );
      await this.audit.record(
        actor,
        {
          action: 'member.added',
          targetType: 'user',
          targetId: user.id,
          changes: { email: user.email, role: user.role },
        },
        manager,
      );
      return { ok: true as const, user };
    });
  }
}

/**
 * Delegation for roles: a role stands for its scopes (`ROLE_SCOPES`), so giving it (inviting,
 * promoting) needs a calling token that holds each of them, as making a token would.
 */
export function assertCanGrantRole(principal: Principal, role: Role): void {
  const missing = ROLE_SCOPES[role].filter((scope) => !principal.scopes.has(scope));
  if (missing.length) {
    throw new ProblemException(
      'forbidden',
      `The role '${role}' grants scopes the calling token lacks: ${missing.join(', ')}`,
    );
  }
}

/** What the removal stopped, for the `member.removed` entry: ids by kind, and the sessions. */
function summary(held: MemberCredentialsResource): Record<string, unknown> {
  return {
    personal_access_tokens: held.personal_access_tokens.map((t) => t.id),
    oauth_clients: held.oauth_clients.map((c) => c.id),
    authorized_apps: held.authorized_apps.map((a) => a.client_id),
    webhook_endpoints: held.webhook_endpoints.map((e) => e.id),
    invitations: held.invitations.map((i) => i.id),
    sessions: held.sessions,
  };
}

export function toMemberResource(user: UserRecord): MemberResource {
  return {
    id: publicId('user', user.id),
    object: 'member',
    email: user.email,
    name: user.name,
    role: user.role,
    organization_id: publicId('organization', user.organizationId),
    created_at: toIso(user.createdAt),
    updated_at: toIso(user.updatedAt),
  };
}

export function toInvitationResource(invitation: InvitationRecord): InvitationResource {
  return {
    id: publicId('invitation', invitation.id),
    object: 'invitation',
    email: invitation.email,
    role: invitation.role,
    expires_at: toIso(invitation.expiresAt),
    created_at: toIso(invitation.createdAt),
  };
}
