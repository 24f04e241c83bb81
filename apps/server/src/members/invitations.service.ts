import { randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import {
  contract,
  INVITATION_TTL_DAYS,
  type InvitationResource,
  type ListQuery,
  type Role,
  ROLE_SCOPES,
} from '@platform/contract';
import { IsNull, MoreThan, type Repository } from 'typeorm';
import type { AuditActor } from '../audit/audit-actor';
import { AuditService } from '../audit/audit.service';
import { earlierExpiry } from '../auth/delegation';
import { Clock } from '../common/clock';
import { findOwned } from '../common/find-owned';
import { newId, publicId } from '../common/ids';
import { ListCollection, type ListOptions } from '../common/list/find-page';
import { pageEnvelope, type PageUrl } from '../common/list/page-envelope';
import { ProblemException } from '../common/problem.exception';
import type { Principal } from '../common/principal';
import { alreadyExists, invalidField } from '../common/resource-errors';
import { toIso } from '../common/timestamp';
import { TransactionRunner } from '../common/transactions';
import { APP_CONFIG } from '../config/config.module';
import { type AppConfig, serverOrigin } from '../config/env';
import { Sql } from '../database/sql';
import { MailOutbox } from '../mail/mail-outbox';
import { AccountRecord, UserRecord } from '../oauth/entities';
import { lockAccount, normalizeEmail, UsersService } from '../oauth/users.service';
import { Organization } from '../organizations/organization.entity';
import { normalizeIp } from '../rate-limit/organization-throttler.guard';
import { hashToken } from '../security/crypto';
import { InvitationRecord } from './invitation.entity';
import { queueInvitationMail } from './invitation-mail';
import { assertCanGrantRole } from './members.service';

const INVITATION_TTL_MS = INVITATION_TTL_DAYS * 24 * 3600 * 1000;

/** Where an invitee opens their link (server-rendered, see `accept-pages.ts`). */
export const ACCEPT_PATH = '/invitations/accept';

/**
 * A sandbox has no members of its own (decision 33): its parent's members reach it through its
 * tokens. An invitation into it would make a second, unmanaged way in.
 */
async function assertNotSandbox(
  invitations: Repository<InvitationRecord>,
  organizationId: string,
): Promise<void> {
  const organization = await invitations.manager.findOneBy(Organization, { id: organizationId });
  if (organization?.parentOrganizationId) {
    throw new ProblemException(
      'conflict',
      `A sandbox has no members of its own: invite to its parent organization (${organization.parentOrganizationId}), whose members reach the sandbox through its tokens`,
    );
  }
}

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

/**
 * Invitations: made (mailed to the invitee, or the link answered without mail), resent, revoked,
 * listed, and accepted through the link's page (accept-pages.ts).
 */
@Injectable()
export class InvitationsService {
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
    private readonly outbox: MailOutbox,
  ) {
    this.listOptions = { searchTimeoutMs: config.searchTimeoutMs };
    // `expires_at`: the list shows pending invitations only, a condition the service adds.
    this.listedInvitations = ListCollection.of(sql, invitations, contract.invitations.list.query, {
      expires_at: 'expires_at',
    });
  }

  async list(organizationId: string, query: ListQuery, url: PageUrl) {
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

  retrieve(organizationId: string, id: string): Promise<InvitationRecord> {
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
    await assertNotSandbox(this.invitations, principal.organizationId);
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

  /**
   * A new link for a pending invitation, for another INVITATION_TTL_DAYS: the old link stops
   * working in the same write, and the new one is mailed (or answered, without mail).
   */
  async resend(
    principal: Principal,
    id: string,
    actor: AuditActor,
  ): Promise<{ invitation: InvitationRecord; acceptUrl: string | null }> {
    const invitation = await this.retrieve(principal.organizationId, id);
    assertCanGrantRole(principal, invitation.role);
    await assertNotSandbox(this.invitations, principal.organizationId);
    const now = this.clock.now();
    const expiresAt = earlierExpiry(
      new Date(now.getTime() + INVITATION_TTL_MS),
      principal.expiresAt,
    )!;
    const token = newInvitationToken();
    const acceptUrl = `${serverOrigin(this.config)}${ACCEPT_PATH}?token=${encodeURIComponent(token)}`;
    const mailed = this.outbox.sends;
    await this.tx.run(async (manager) => {
      // Only a still-pending invitation: one accepted, revoked or expired stays as it is.
      const renewed = await manager.update(
        InvitationRecord,
        { id: invitation.id, acceptedAt: IsNull(), revokedAt: IsNull(), expiresAt: MoreThan(now) },
        { tokenHash: hashToken(token), expiresAt, updatedAt: now },
      );
      if (!renewed.affected) {
        throw new ProblemException(
          'conflict',
          'This invitation was accepted, revoked or has expired: invite the address again instead',
        );
      }
      Object.assign(invitation, { tokenHash: hashToken(token), expiresAt, updatedAt: now });
      await this.audit.record(
        actor,
        {
          action: 'invitation.resent',
          targetType: 'invitation',
          targetId: invitation.id,
          changes: { expires_at: toIso(expiresAt) },
        },
        manager,
      );
      if (mailed) await queueInvitationMail(manager, this.outbox, invitation, acceptUrl);
    });
    return { invitation, acceptUrl: mailed ? null : acceptUrl };
  }

  async revoke(organizationId: string, id: string, actor: AuditActor): Promise<InvitationRecord> {
    const invitation = await this.retrieve(organizationId, id);
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

  /** Whether the invited address already has an account (its owner joins with its password). */
  /** Whether the address is a person's: an account with a membership somewhere. */
  async hasAccount(email: string): Promise<boolean> {
    const account = await this.accounts.findAccountByEmail(email);
    return account !== null && (await this.accounts.usersOf(account.id)).length > 0;
  }

  /**
   * Makes the invitee a member with the invited role and ends the invitation, in one
   * transaction; the update only succeeds on a still-pending invitation, so a link raced
   * twice makes one member. An address without an account gets one with `password`; one with
   * an account joins it, proven by its password (decision 34: the person signs in to accept),
   * so nobody holding the link but not the account can attach the membership to it.
   */
  async accept(
    token: string,
    input: { password: string; name: string },
    ip?: string,
  ): Promise<{ ok: true; user: UserRecord } | { ok: false; reason: string }> {
    const found = await this.findByToken(token);
    const ended = invitationEnded(found, this.clock.now());
    if (ended || !found) return { ok: false, reason: ended ?? 'unknown' };
    let account: AccountRecord | undefined;
    if (await this.hasAccount(found.email)) {
      const signedIn = await this.accounts.verifyPassword(found.email, input.password);
      if (!signedIn) return { ok: false, reason: 'password' };
      account = signedIn.account;
    }
    return this.tx.run(async (manager) => {
      const now = this.clock.now();
      // The account's last membership removed meanwhile took the account with it: open the
      // link again (the address then has none). Held to the commit, so no removal races this.
      if (account) {
        if (!(await lockAccount(this.sql, manager, account.id))) {
          return { ok: false as const, reason: 'retry' };
        }
        // As it is now: an email change confirmed meanwhile gives the membership its address.
        account = (await manager.findOneBy(AccountRecord, { id: account.id })) ?? account;
      }
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
          ...(account ? { account } : { password: input.password }),
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
