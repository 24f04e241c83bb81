import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { isScope, type Role } from '@platform/contract';
import type { DataSource } from 'typeorm';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/env';
import { hydrateValue, SqlParams } from '../common/sql';
import { artifactKey } from '../oauth/adapter';
import { OAuthClientRecord } from '../oauth/entities';
import { apiResource } from '../oauth/issuer';
import { isPortalClient, PORTAL_CLIENT_ID } from '../oauth/portal-client';
import { OrganizationsService } from '../organizations/organizations.service';
import { effectiveScopes, type OAuthPrincipal } from './principal';
import { roleOf } from './tokens.service';

export type OAuthAuthenticationResult =
  | { ok: true; principal: OAuthPrincipal }
  | { ok: false; reason: 'malformed' | 'unknown' | 'expired' | 'revoked' };

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

/**
 * Resolves OAuth access tokens for the bearer strategy. They are read straight from the
 * authorization server's table (by SHA-256, with the client and organization in one statement)
 * rather than through oidc-provider, which keeps the per-request path as short as a personal
 * token's. A revoked token, or one whose client was deleted, has no row and is refused.
 */
@Injectable()
export class OAuthTokensService {
  private readonly resource: string;
  private readonly sql: string;
  private readonly userSql: string;
  private readonly portalSql: string;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly organizations: OrganizationsService,
  ) {
    this.resource = apiResource(config);
    const param = new SqlParams(config.database.type).add(null);
    this.sql =
      `SELECT a.payload, c.organization_id, c.expires_at AS client_expires_at, c.user_id AS owner_id, o.rate_limit_per_minute ` +
      `FROM oauth_artifacts a ` +
      `LEFT JOIN oauth_clients c ON c.id = a.client_id ` +
      `LEFT JOIN organizations o ON o.id = c.organization_id ` +
      `WHERE a.kind IN ('AccessToken', 'ClientCredentials') AND a.id_hash = ${param} ` +
      // The portal's first-party client is built in, not a row (see oauth/portal-client.ts).
      `AND (c.id IS NOT NULL OR a.client_id = '${PORTAL_CLIENT_ID}')`;
    this.portalSql =
      `SELECT u.organization_id, u.role, o.rate_limit_per_minute FROM users u ` +
      `JOIN organizations o ON o.id = u.organization_id WHERE u.id = ${param}`;
    this.userSql = `SELECT role, organization_id FROM users WHERE id = ${new SqlParams(config.database.type).add(null)}`;
  }

  async authenticate(token: string, now = Date.now()): Promise<OAuthAuthenticationResult> {
    if (!OPAQUE_TOKEN.test(token)) return { ok: false, reason: 'malformed' };
    const rows: {
      payload: string;
      organization_id: string;
      client_expires_at: unknown;
      owner_id: string | null;
      rate_limit_per_minute: unknown;
    }[] = await this.dataSource.query(this.sql, [artifactKey(token)]);
    const row = rows[0];
    if (!row) return { ok: false, reason: 'unknown' };
    const stored = JSON.parse(row.payload) as StoredAccessToken;
    const audiences = [stored.aud ?? []].flat();
    // Audience-restricted (RFC 9700 §2.3): only tokens issued for this API are accepted.
    if (!stored.clientId || !audiences.includes(this.resource))
      return { ok: false, reason: 'unknown' };
    if (!stored.exp || stored.exp * 1000 <= now) return { ok: false, reason: 'expired' };
    if (isPortalClient(stored.clientId)) return this.portalPrincipal(stored);
    // A client registered by an expiring credential ends with it, and so do its tokens.
    const clientExpiresAt = hydrateValue(
      this.dataSource.manager,
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
    let role: Role | null = null;
    if (userId) {
      const [user] = await this.dataSource.query<{ role: unknown; organization_id: string }[]>(
        this.userSql,
        [userId],
      );
      role = user ? roleOf(user.role) : null;
      if (!role || user?.organization_id !== row.organization_id) {
        return { ok: false, reason: 'revoked' };
      }
    }
    return this.accepted(
      stored,
      { clientId: stored.clientId, userId, role, row },
      new Date(Math.min(stored.exp * 1000, clientExpiresAt?.getTime() ?? Number.POSITIVE_INFINITY)),
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
    },
    expiresAt: Date | null,
  ): OAuthAuthenticationResult {
    return {
      ok: true,
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
        scopes: effectiveScopes((stored.scope ?? '').split(' ').filter(isScope), who.role),
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
    if (!stored.accountId || !stored.clientId) return { ok: false, reason: 'unknown' };
    const rows: { organization_id: string; role: unknown; rate_limit_per_minute: unknown }[] =
      await this.dataSource.query(this.portalSql, [stored.accountId]);
    const row = rows[0];
    const role = row ? roleOf(row.role) : null;
    if (!row || !role) return { ok: false, reason: 'revoked' };
    return this.accepted(
      stored,
      { clientId: stored.clientId, userId: stored.accountId, role, row },
      null,
    );
  }
}
