import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { isScope, type Role } from '@platform/contract';
import type { DataSource } from 'typeorm';
import { effectiveScopes, roleOf } from '../auth/effective-scopes';
import type { OAuthPrincipal } from '../common/principal';
import { OAuthAccessTokenResolver, type ResolvedToken } from '../auth/token-resolver';
import { Clock } from '../common/clock';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/env';
import { Sql } from '../database/sql';
import { Organization } from '../organizations/organization.entity';
import { OrganizationsService } from '../organizations/organizations.service';
import { artifactKey } from './adapter';
import { OAuthArtifactRecord, OAuthClientRecord, UserRecord } from './entities';
import { apiResource } from './issuer';
import { isPortalClient, PORTAL_CLIENT_ID } from './portal-client';

type OAuthAuthenticationResult = ResolvedToken<OAuthPrincipal>;

/** oidc-provider's opaque tokens: 43 base64url characters; anything far from that is not one. */
const OPAQUE_TOKEN = /^[A-Za-z0-9_-]{32,128}$/;

interface StoredAccessToken {
  exp?: number;
  aud?: string | string[];
  scope?: string;
  clientId?: string;
  accountId?: string;
  grantId?: string;
}

interface TokenRow {
  payload: string;
  organization_id: string;
  client_expires_at: unknown;
  owner_id: string | null;
  /** The owner member's id when they are still a member of the client's organization. */
  owner_member: string | null;
  client_scopes: string | null;
  rate_limit_per_minute: unknown;
}

/**
 * Resolves OAuth access tokens for the bearer strategy. They are read straight from the
 * authorization server's table (by SHA-256, with the client and organization in one statement)
 * rather than through oidc-provider, which keeps the per-request path as short as a personal
 * token's. A revoked token, or one whose client was deleted, has no row and is refused.
 */
@Injectable()
export class OAuthAccessTokens implements OAuthAccessTokenResolver {
  private readonly resource: string;
  /** Statement texts, built once from the entities' metadata: they run on every request. */
  private readonly tokenSql: string;
  private readonly userSql: string;
  private readonly portalSql: string;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly sql: Sql,
    private readonly organizations: OrganizationsService,
    private readonly clock: Clock,
  ) {
    this.resource = apiResource(config);
    const artifact = (p: string) => `a.${sql.column(OAuthArtifactRecord, p)}`;
    const client = (p: string) => `c.${sql.column(OAuthClientRecord, p)}`;
    const organization = (p: string) => `o.${sql.column(Organization, p)}`;
    const user = (p: string) => `u.${sql.column(UserRecord, p)}`;
    const owner = (p: string) => `ow.${sql.column(UserRecord, p)}`;
    this.tokenSql =
      `SELECT ${artifact('payload')} AS payload, ${client('organizationId')} AS organization_id, ` +
      `${client('expiresAt')} AS client_expires_at, ${client('userId')} AS owner_id, ` +
      `${client('scopes')} AS client_scopes, ${owner('id')} AS owner_member, ` +
      `${organization('rateLimitPerMinute')} AS rate_limit_per_minute ` +
      `FROM ${sql.table(OAuthArtifactRecord)} a ` +
      `LEFT JOIN ${sql.table(OAuthClientRecord)} c ON ${client('id')} = ${artifact('clientId')} ` +
      `LEFT JOIN ${sql.table(UserRecord)} ow ON ${owner('id')} = ${client('userId')} ` +
      `AND ${owner('organizationId')} = ${client('organizationId')} ` +
      `LEFT JOIN ${sql.table(Organization)} o ON ${organization('id')} = ${client('organizationId')} ` +
      `WHERE ${artifact('kind')} IN (:...kinds) AND ${artifact('idHash')} = :idHash ` +
      // The portal's first-party client is built in, not a row (see oauth/portal-client.ts).
      `AND (${client('id')} IS NOT NULL OR ${artifact('clientId')} = :portalClientId)`;
    this.portalSql =
      `SELECT ${user('organizationId')} AS organization_id, ${user('role')} AS role, ` +
      `${organization('rateLimitPerMinute')} AS rate_limit_per_minute ` +
      `FROM ${sql.table(UserRecord)} u ` +
      `JOIN ${sql.table(Organization)} o ON ${organization('id')} = ${user('organizationId')} ` +
      `WHERE ${user('id')} = :userId`;
    this.userSql =
      `SELECT ${user('role')} AS role, ${user('organizationId')} AS organization_id ` +
      `FROM ${sql.table(UserRecord)} u WHERE ${user('id')} = :userId`;
  }

  async authenticate(token: string, now = this.clock.nowMs()): Promise<OAuthAuthenticationResult> {
    if (!OPAQUE_TOKEN.test(token)) return { ok: false, reason: 'malformed' };
    const [row] = await this.sql.query<TokenRow>(this.dataSource.manager, this.tokenSql, {
      kinds: ['AccessToken', 'ClientCredentials'],
      idHash: artifactKey(token),
      portalClientId: PORTAL_CLIENT_ID,
    });
    if (!row) return { ok: false, reason: 'unknown' };
    const stored = JSON.parse(row.payload) as StoredAccessToken;
    const audiences = [stored.aud ?? []].flat();
    // Audience-restricted (RFC 9700 §2.3): only tokens issued for this API are accepted.
    if (!stored.clientId || !audiences.includes(this.resource))
      return { ok: false, reason: 'unknown' };
    if (!stored.exp || stored.exp * 1000 <= now) return { ok: false, reason: 'expired' };
    if (isPortalClient(stored.clientId)) return this.portalPrincipal(stored);
    // A client registered by an expiring credential ends with it, and so do its tokens.
    const clientExpiresAt = this.sql.read(
      OAuthClientRecord,
      'expiresAt',
      row.client_expires_at,
    ) as Date | null;
    if (clientExpiresAt && clientExpiresAt.getTime() <= now)
      return { ok: false, reason: 'expired' };
    // A user's token does what the user's role allows as of now; a removed member's is dead.
    // A client credentials token of an app a member registered acts for that member: their
    // role caps it, and it ends with their membership (an app cannot outlive its maker's say).
    const userId = stored.accountId ?? row.owner_id ?? null;
    // An app's grants (a user's approval included) end with the membership of the member it
    // belongs to, unless an admin transferred it first.
    if (row.owner_id && !row.owner_member) return { ok: false, reason: 'revoked' };
    let role: Role | null = null;
    if (userId) {
      const [user] = await this.sql.query<{ role: unknown; organization_id: string }>(
        this.dataSource.manager,
        this.userSql,
        { userId },
      );
      role = user ? roleOf(user.role) : null;
      if (!role || user?.organization_id !== row.organization_id) {
        return { ok: false, reason: 'revoked' };
      }
    }
    const endsAtMs = Math.min(
      stored.exp * 1000,
      clientExpiresAt?.getTime() ?? Number.POSITIVE_INFINITY,
    );
    return this.accepted(
      stored,
      {
        clientId: stored.clientId,
        userId,
        role,
        row,
        clientScopes: new Set((row.client_scopes ?? '').split(' ')),
      },
      new Date(endsAtMs),
      endsAtMs,
    );
  }

  /** The principal of an accepted token: its scopes capped by the member's role, if any. */
  private accepted(
    stored: StoredAccessToken,
    who: {
      clientId: string;
      userId: string | null;
      role: Role | null;
      row: { organization_id: string; rate_limit_per_minute: unknown };
      /** The client's own scopes; absent for the portal (a built-in client). */
      clientScopes?: ReadonlySet<string>;
    },
    expiresAt: Date | null,
    /** When the clock alone refuses the token: its `exp`, or its client's expiry if sooner. */
    endsAtMs: number,
  ): OAuthAuthenticationResult {
    return {
      ok: true,
      endsAtMs,
      principal: {
        kind: 'oauth_access_token',
        clientId: who.clientId,
        userId: who.userId,
        role: who.role,
        grantId: stored.grantId ?? null,
        organizationId: who.row.organization_id,
        rateLimitPerMinute: this.organizations.rateLimitOf({
          rateLimitPerMinute:
            who.row.rate_limit_per_minute == null ? null : Number(who.row.rate_limit_per_minute),
        }),
        scopes: effectiveScopes(
          (stored.scope ?? '')
            .split(' ')
            .filter(isScope)
            // Never more than its client may have now (cut on its member's demotion).
            .filter((scope) => !who.clientScopes || who.clientScopes.has(scope)),
          who.role,
        ),
        expiresAt,
      },
    };
  }

  /**
   * A portal token acts for its user in the user's organization, with what the user's role
   * allows as of now; a user who no longer exists has no token. Its `expiresAt` is null: the
   * portal is the member acting with their own authority (it is how customers make their first
   * long-lived personal token), so what they create there is not bound to the one-hour session
   * the way a third-party app's creations are bound to the app's token; the session itself
   * still ends at `exp`, checked above.
   */
  private async portalPrincipal(stored: StoredAccessToken): Promise<OAuthAuthenticationResult> {
    if (!stored.accountId || !stored.clientId || !stored.exp)
      return { ok: false, reason: 'unknown' };
    const [row] = await this.sql.query<{
      organization_id: string;
      role: unknown;
      rate_limit_per_minute: unknown;
    }>(this.dataSource.manager, this.portalSql, { userId: stored.accountId });
    const role = row ? roleOf(row.role) : null;
    if (!row || !role) return { ok: false, reason: 'revoked' };
    return this.accepted(
      stored,
      { clientId: stored.clientId, userId: stored.accountId, role, row },
      null,
      stored.exp * 1000,
    );
  }
}
