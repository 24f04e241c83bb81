import {
  canReadEventType,
  ROLE_SCOPES,
  type WebhookDisabledReason,
  type WebhookEndpointOwner,
  type WebhookOwnerType,
} from '@platform/contract';
import { roleOf } from './effective-scopes';
import type { EntityManager, EntityTarget } from 'typeorm';
import type { Principal } from '../common/principal';
import { PersonalAccessToken } from './personal-access-token.entity';
import { type Sql } from '../database/sql';
import { OAuthArtifactRecord, OAuthClientRecord, UserRecord } from '../oauth/entities';
import { publicId } from '../common/ids';
import { isPortalClient } from '../oauth/portal-client';
import { WebhookEndpointRecord } from '../webhooks/webhook-endpoint.entity';
import { Organization } from '../organizations/organization.entity';

/**
 * Who owns a thing a member made over the API (a webhook endpoint, an export's download link),
 * and whether that owner still vouches for it (api.md, "Delegation": nothing made over the API
 * outlives the credential that made it; "Membership": nor the member). Each such record keeps
 * the same `owner_*` columns. A personal access token is the credential itself. An OAuth access
 * token lives an hour, but the authority behind it is its client and, for a user, the user's
 * grant (refresh tokens renew it), so the thing lives while those do.
 */
export interface OwnerColumns {
  ownerType: WebhookOwnerType | null;
  ownerId: string | null;
  ownerUserId: string | null;
  ownerGrantId: string | null;
}

export const NO_OWNER: OwnerColumns = {
  ownerType: null,
  ownerId: null,
  ownerUserId: null,
  ownerGrantId: null,
};

/**
 * What a new owned thing is bound to: the member who made it (`ownerUserId`, whatever the
 * credential: removing or demoting them stops or narrows it, unless an admin transferred it
 * first), and the credential it was made with, which it does not outlive.
 */
export function ownerOf(principal: Principal): OwnerColumns {
  // Made in the portal (its client is built in, see oauth/portal-client.ts): the member's, not
  // bound to their one-hour session.
  if (principal.kind === 'oauth_access_token' && isPortalClient(principal.clientId))
    return { ...NO_OWNER, ownerUserId: principal.userId };
  return principal.kind === 'personal_access_token'
    ? {
        ...NO_OWNER,
        ownerType: 'personal_access_token',
        ownerId: principal.tokenId,
        ownerUserId: principal.userId,
      }
    : {
        ownerType: 'oauth_client',
        ownerId: principal.clientId,
        ownerUserId: principal.userId,
        ownerGrantId: principal.grantId,
      };
}

export function toOwnerResource(record: OwnerColumns): WebhookEndpointOwner {
  if (!record.ownerType || !record.ownerId) return null;
  return {
    type: record.ownerType,
    id: record.ownerId,
    user_id: record.ownerType === 'oauth_client' ? publicId('user', record.ownerUserId) : null,
  };
}

/**
 * The owner's state joined to an owned record aliased `e`: the personal access token, or the
 * OAuth client and (for a user) how long the grant still has a usable token. Used where the
 * thing is used (a delivery made, a download link followed), so nothing is sent once the owner
 * is revoked, deleted or expired, however that happened. A user's grant is alive while an unused
 * access or refresh token of it is: revoking it (RFC 7009), a refresh token's reuse and expiry
 * all remove or consume those. Table and column names come from the entities' metadata; the
 * aliases are what `ownerEnded` reads. `entity` is the owned record: a webhook endpoint unless
 * given (an export's download link).
 */
export function ownerSql(
  sql: Sql,
  entity: EntityTarget<OwnerColumns & { organizationId: string }> = WebhookEndpointRecord,
): { join: string; select: string } {
  const e = (property: keyof OwnerColumns | 'organizationId') =>
    `e.${sql.column(entity, property)}`;
  const pat = (property: keyof PersonalAccessToken) =>
    `owner_pat.${sql.column(PersonalAccessToken, property)}`;
  const client = (property: keyof OAuthClientRecord) =>
    `owner_client.${sql.column(OAuthClientRecord, property)}`;
  const g = (property: keyof OAuthArtifactRecord) =>
    `g.${sql.column(OAuthArtifactRecord, property)}`;
  const member = (property: keyof UserRecord) => `owner_member.${sql.column(UserRecord, property)}`;
  // A sandbox's records are owned by members of its parent (docs/sandboxes.md).
  const org = (property: keyof Organization) => `owner_org.${sql.column(Organization, property)}`;
  return {
    join: `LEFT JOIN ${sql.table(PersonalAccessToken)} owner_pat
         ON ${e('ownerType')} = 'personal_access_token' AND ${pat('id')} = ${e('ownerId')}
       LEFT JOIN ${sql.table(OAuthClientRecord)} owner_client
         ON ${e('ownerType')} = 'oauth_client' AND ${client('id')} = ${e('ownerId')}
       LEFT JOIN ${sql.table(Organization)} owner_org ON ${org('id')} = ${e('organizationId')}
       LEFT JOIN ${sql.table(UserRecord)} owner_member
         ON ${member('id')} = ${e('ownerUserId')}
         AND ${member('organizationId')} = COALESCE(${org('parentOrganizationId')}, ${e('organizationId')})`,
    select: `${e('ownerType')} AS owner_type, ${e('ownerId')} AS owner_id, ${e('ownerGrantId')} AS owner_grant_id,
       ${e('ownerUserId')} AS owner_user_id, ${member('role')} AS owner_member_role,
       ${pat('id')} AS owner_pat_id, ${pat('revokedAt')} AS owner_pat_revoked_at,
       ${pat('expiresAt')} AS owner_pat_expires_at,
       ${client('id')} AS owner_client_id, ${client('expiresAt')} AS owner_client_expires_at,
       (SELECT MAX(${g('expiresAt')}) FROM ${sql.table(OAuthArtifactRecord)} g
         WHERE ${e('ownerGrantId')} IS NOT NULL AND ${g('grantId')} = ${e('ownerGrantId')}
           AND ${g('kind')} IN ('AccessToken', 'RefreshToken') AND ${g('consumedAt')} IS NULL) AS owner_grant_expires_at`,
  };
}

/**
 * The event types a webhook endpoint may still deliver: those its member's role can read (a
 * demotion narrows it at the next fan-out). Null when it has no member (the organization's own).
 */
export function memberReadableTypes(
  row: Record<string, unknown>,
): ((type: string) => boolean) | null {
  const allowed = memberRoleScopes(row);
  if (!allowed) return null;
  return (type) => canReadEventType(allowed, type);
}

/**
 * The scopes the role of a row's member allows today (a demotion narrows them at once); null
 * when the row has no member (the organization's own) or the member is gone (see `ownerEnded`).
 */
export function memberRoleScopes(row: Record<string, unknown>): ReadonlySet<string> | null {
  const role = roleOf(row.owner_member_role);
  if (row.owner_user_id == null || !role) return null;
  return new Set<string>(ROLE_SCOPES[role]);
}

/** Why the owner of a row selected with `ownerSql(…).select` no longer vouches for it; null if it does. */
export function ownerEnded(
  row: Record<string, unknown>,
  now: Date,
  toDate: (value: unknown) => Date | null,
): Extract<
  WebhookDisabledReason,
  'credential_revoked' | 'credential_expired' | 'member_removed'
> | null {
  const past = (value: unknown) => {
    const date = value == null ? null : toDate(value);
    return date !== null && date.getTime() <= now.getTime();
  };
  // The member who made it (or got it by a transfer) is no longer a member.
  if (row.owner_user_id != null && row.owner_member_role == null) return 'member_removed';
  switch (row.owner_type) {
    case 'personal_access_token':
      if (!row.owner_pat_id || row.owner_pat_revoked_at != null) return 'credential_revoked';
      return past(row.owner_pat_expires_at) ? 'credential_expired' : null;
    case 'oauth_client':
      // A deleted client, or a grant without a usable token left (revoked, swept), is revoked.
      if (!row.owner_client_id) return 'credential_revoked';
      if (row.owner_grant_id && row.owner_grant_expires_at == null) return 'credential_revoked';
      if (past(row.owner_client_expires_at)) return 'credential_expired';
      return row.owner_grant_id && past(row.owner_grant_expires_at) ? 'credential_expired' : null;
    default:
      return null;
  }
}

/**
 * Disables the enabled endpoints bound to a credential that was just revoked or deleted, so the
 * API shows it at once (delivery checks the owner again in any case, which covers expiry). A
 * plain function on the caller's transaction, called through the CredentialRevocations port
 * (MemberOwnedModule) as tokens, OAuth clients and members are revoked.
 */
export async function disableOwnedEndpoints(
  sql: Sql,
  manager: EntityManager,
  owner: { type: WebhookOwnerType; id: string },
  now: Date,
): Promise<void> {
  const name = (property: keyof WebhookEndpointRecord) =>
    sql.column(WebhookEndpointRecord, property);
  const bind = (property: keyof WebhookEndpointRecord, value: unknown): unknown =>
    sql.bind(WebhookEndpointRecord, property, value);
  await sql.query(
    manager,
    `UPDATE ${sql.table(WebhookEndpointRecord)}
     SET ${name('enabled')} = :disabled, ${name('disabledReason')} = 'credential_revoked', ${name('updatedAt')} = :now
     WHERE ${name('ownerType')} = :ownerType AND ${name('ownerId')} = :ownerId AND ${name('enabled')} = :enabled`,
    {
      disabled: bind('enabled', false),
      now: bind('updatedAt', now),
      ownerType: owner.type,
      ownerId: owner.id,
      enabled: bind('enabled', true),
    },
  );
}
