import { Inject, Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import {
  contract,
  type ListQuery,
  type MemberCredentialsResource,
  type MemberResource,
  type Role,
  ROLE_SCOPES,
} from '@platform/contract';
import { type EntityManager, In, type Repository } from 'typeorm';
import type { AuditActor } from '../audit/audit-actor';
import { AuditService } from '../audit/audit.service';
import type { Principal } from '../common/principal';
import { revokeTokensOf } from '../auth/tokens.service';
import { Clock } from '../common/clock';
import { publicId } from '../common/ids';
import { Organization } from '../organizations/organization.entity';
import { ListCollection, type ListOptions } from '../common/list/find-page';
import { pageEnvelope, type PageUrl } from '../common/list/page-envelope';
import { ProblemException } from '../common/problem.exception';
import { findOwned } from '../common/find-owned';
import { toIso } from '../common/timestamp';
import { TransactionRunner } from '../common/transactions';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/env';
import { CredentialRevocations } from '../common/credential-revocations';
import { Sql } from '../database/sql';
import { OAuthArtifactRecord, OAuthClientRecord, UserRecord } from '../oauth/entities';
import { revokeClientArtifacts } from '../oauth/adapter';
import { deleteArtifacts, memberArtifacts } from '../oauth/member-artifacts';
import { dropAccountsWithoutMembers, lockAccount } from '../oauth/users.service';
import { WebhookEndpointRecord } from '../webhooks/webhook-endpoint.entity';
import { memberCredentials, narrowMemberTo, revokeInvitationsOf } from './member-credentials';

@Injectable()
export class MembersService {
  private readonly listedMembers: ListCollection<UserRecord>;
  /** How long a `q` search may take (`SEARCH_TIMEOUT`). */
  private readonly listOptions: ListOptions;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    @InjectRepository(UserRecord) private readonly users: Repository<UserRecord>,
    private readonly tx: TransactionRunner,
    private readonly audit: AuditService,
    private readonly sql: Sql,
    private readonly clock: Clock,
    private readonly revocations: CredentialRevocations,
  ) {
    this.listOptions = { searchTimeoutMs: config.searchTimeoutMs };
    this.listedMembers = ListCollection.of(sql, users, contract.members.list.query);
  }

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
      // One person's memberships change one at a time: two last removals, or a removal and an
      // invitation accepted, see each other's outcome (the account then goes, or stays).
      await lockAccount(this.sql, manager, user.accountId);
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
      // The person's other memberships stay; with none left, their account goes too.
      await dropAccountsWithoutMembers(this.sql, manager, [user.accountId]);
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

  /** Each organization's name, by id. */
  async organizationNames(ids: readonly string[]): Promise<Map<string, string>> {
    if (!ids.length) return new Map();
    const rows = await this.users.manager.find(Organization, { where: { id: In([...ids]) } });
    return new Map(rows.map((o) => [o.id, o.name]));
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
