import { readScopesForEvents, type Role, ROLE_SCOPES } from '@platform/contract';
import type { EntityManager } from 'typeorm';
import { ProblemException } from '../common/problem.exception';
import type { Principal } from '../common/principal';
import { unknownReference } from '../common/resource-errors';
import { UserRecord } from '../oauth/entities';

/**
 * The offboarding rule's other half (api.md, "Membership"): acting on a credential or feed
 * (changing, rotating, deleting it) needs being allowed to act as its owner, besides holding its
 * scopes. The owner is the member who made it, or to whom an admin transferred it; without one it
 * is the organization's. Its owner and admins may act on it; a token acting for no member (an
 * operator's, made with the CLI) acts for the organization and may too.
 */
export function mayActAs(principal: Principal, ownerUserId: string | null): boolean {
  if (principal.userId === null || principal.role === 'admin') return true;
  return ownerUserId !== null && ownerUserId === principal.userId;
}

/** 403 unless `mayActAs`; `what` names the record ("Webhook endpoint whe_…"). */
export function assertMayActAs(
  principal: Principal,
  ownerUserId: string | null,
  what: string,
): void {
  if (mayActAs(principal, ownerUserId)) return;
  const whose = ownerUserId
    ? 'another member: only that member or an admin may change it'
    : 'the organization: only an admin may change it';
  throw new ProblemException(
    'forbidden',
    `${what} belongs to ${whose} (an admin can transfer it to you)`,
  );
}

/** 403 unless the caller is an admin (or acts for the organization itself). */
export function assertAdmin(principal: Principal, action: string): void {
  if (principal.userId === null || principal.role === 'admin') return;
  throw new ProblemException('forbidden', `Only an admin may ${action}`);
}

/** A member of the organization by public id, inside `manager`'s transaction; else a 400. */
export async function memberOf(
  manager: EntityManager,
  organizationId: string,
  memberId: string,
): Promise<UserRecord> {
  const member = await manager.findOneBy(UserRecord, { id: memberId, organizationId });
  if (!member) throw unknownReference('member_id', 'member', memberId);
  return member;
}

/** 403 unless `role` may read every one of `events` (a webhook endpoint's subscriptions). */
export function assertRoleCanRead(role: Role, events: readonly string[], who: string): void {
  assertScopesCanRead(ROLE_SCOPES[role], events, `${who} (${role})`);
}

/** 403 unless `allowed` holds the read scope of every one of `events`. */
export function assertScopesCanRead(
  allowed: readonly string[],
  events: readonly string[],
  who: string,
): void {
  const missing = readScopesForEvents(events).filter((scope) => !allowed.includes(scope));
  if (missing.length) {
    throw new ProblemException(
      'forbidden',
      `${who} cannot read ${missing.join(', ')}, which the endpoint's events need`,
    );
  }
}
