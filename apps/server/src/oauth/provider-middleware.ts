import type { IncomingMessage } from 'node:http';
import type { Logger } from '@nestjs/common';
import { ALL_SCOPES, OAUTH_PATHS } from '@platform/contract';
import type Provider from 'oidc-provider';
import type { KoaContextWithOIDC } from 'oidc-provider';
import type { AuditService } from '../audit/audit.service';
import { normalizeIp } from '../rate-limit/organization-throttler.guard';
import type { OAuthClientsService } from './oauth-clients.service';
import { isPortalClient, PORTAL_CLIENT_ID, PORTAL_SIGN_OUT_PATH } from './portal-client';
import type { UsersService } from './users.service';

/** Koa middleware of the authorization server (`provider.use`). */
type ProviderMiddleware = (ctx: KoaContextWithOIDC, next: () => Promise<void>) => Promise<void>;

/** A request for the RFC 8414 metadata, which oidc-provider serves as its OIDC discovery. */
export interface MetadataRequest extends IncomingMessage {
  platformMetadata?: boolean;
}

/** OpenID Connect fields with no meaning for this plain OAuth 2.0 server. */
const OIDC_ONLY_METADATA = [
  'claims_parameter_supported',
  'claims_supported',
  'id_token_signing_alg_values_supported',
  'subject_types_supported',
  'userinfo_endpoint',
  'userinfo_signing_alg_values_supported',
  'end_session_endpoint',
  'request_parameter_supported',
  'request_uri_parameter_supported',
  'require_request_uri_registration',
  'jwks_uri',
  'acr_values_supported',
  'claim_types_supported',
];

/**
 * No CORS here either, as on the API: oidc-provider answers preflights and adds
 * Access-Control-* headers on its own (clientBasedCORS refuses only later, at client
 * authentication), so they are taken off every response of the authorization server.
 */
export const withoutCors: ProviderMiddleware = async (ctx, next) => {
  try {
    await next();
  } finally {
    for (const name of Object.keys(ctx.response.headers)) {
      if (name.toLowerCase().startsWith('access-control-')) ctx.remove(name);
    }
  }
};

/**
 * The portal's "Sign out": ends this browser's sign-in session and revokes the portal token
 * in one step, with no confirmation page a person could leave half-way (a shared computer).
 * The portal's bearer token, which only its page holds, stands in for that page's
 * anti-forgery token: another site cannot send it, so cannot sign a member out.
 */
export function portalSignOut(
  provider: Provider,
  users: UsersService,
  audit: AuditService,
  logger: Logger,
): ProviderMiddleware {
  return async (ctx, next) => {
    if (ctx.path !== PORTAL_SIGN_OUT_PATH) return next();
    if (ctx.method !== 'POST') {
      ctx.status = 405;
      ctx.set('Allow', 'POST');
      return;
    }
    const bearer = /^Bearer ([A-Za-z0-9\-._~+/]+=*)$/.exec(ctx.get('authorization'))?.[1];
    const token = bearer ? await provider.AccessToken.find(bearer) : undefined;
    if (!token || !isPortalClient(token.clientId)) {
      ctx.status = 401;
      return;
    }
    const session = await provider.Session.get(provider.createContext(ctx.req, ctx.res));
    if (session.accountId === token.accountId) await session.destroy();
    await token.destroy();
    ctx.status = 204;
    try {
      const user = token.accountId ? await users.findById(token.accountId) : null;
      if (user) {
        const ip = ctx.ip ? normalizeIp(ctx.ip) : null;
        await audit.record(
          {
            kind: 'sign_in',
            organizationId: user.organizationId,
            credentialId: PORTAL_CLIENT_ID,
            userId: user.id,
            ip,
          },
          { action: 'user.signed_out', targetType: 'user', targetId: user.id },
        );
      }
    } catch (error) {
      logger.error(`Could not audit a portal sign-out: ${(error as Error).message}`);
    }
  };
}

/**
 * Revoking a token (RFC 7009) and signing out are recorded in the audit log of the
 * organization they belong to: the client's, or for the portal the member's. Who signs out
 * is read before the confirmation ends their session.
 */
export function auditedRevocationAndSignOut(
  provider: Provider,
  clients: OAuthClientsService,
  users: UsersService,
  audit: AuditService,
  logger: Logger,
): ProviderMiddleware {
  const signingOut = new WeakMap<object, string>();
  const auditOAuthRequest = async (ctx: KoaContextWithOIDC, what: 'revoke' | 'sign_out') => {
    const entities = ctx.oidc.entities as Record<
      string,
      { clientId?: string; accountId?: string; kind?: string } | undefined
    >;
    const token = entities.AccessToken ?? entities.RefreshToken ?? entities.ClientCredentials;
    const accountId = what === 'revoke' ? token?.accountId : signingOut.get(ctx.req);
    const clientId = what === 'revoke' ? token?.clientId : ctx.oidc.client?.clientId;
    if (!clientId || (what === 'sign_out' && !accountId)) return;
    const user = accountId ? await users.findById(accountId) : null;
    const client = isPortalClient(clientId) ? null : await clients.findById(clientId);
    const organizationId = client?.organizationId ?? user?.organizationId;
    if (!organizationId) return;
    const ip = ctx.ip ? normalizeIp(ctx.ip) : null;
    if (what === 'revoke') {
      await audit.record(
        {
          kind: 'oauth_client',
          organizationId,
          credentialId: clientId,
          userId: user?.id ?? null,
          ip,
        },
        {
          action: 'oauth_token.revoked',
          targetType: 'oauth_client',
          targetId: clientId,
          changes: { token: token?.kind ?? null },
        },
      );
    } else if (user) {
      await audit.record(
        { kind: 'sign_in', organizationId, credentialId: clientId, userId: user.id, ip },
        { action: 'user.signed_out', targetType: 'user', targetId: user.id },
      );
    }
  };
  return async (ctx, next) => {
    if (ctx.method === 'POST' && ctx.path === `${OAUTH_PATHS.endSession}/confirm`) {
      const session = await provider.Session.get(provider.createContext(ctx.req, ctx.res));
      if (session.accountId) signingOut.set(ctx.req, session.accountId);
    }
    await next();
    if (ctx.method !== 'POST' || ctx.status >= 400) return;
    const path = ctx.path;
    if (path !== OAUTH_PATHS.revocation && path !== `${OAUTH_PATHS.endSession}/confirm`) return;
    try {
      await auditOAuthRequest(ctx, path === OAUTH_PATHS.revocation ? 'revoke' : 'sign_out');
    } catch (error) {
      logger.error(`Could not audit ${path}: ${(error as Error).message}`);
    }
  };
}

/**
 * oidc-provider's discovery document as RFC 8414 metadata (a MetadataRequest): without the
 * OpenID Connect fields, with endpoints on the issuer, and with what this server supports.
 */
export function publishedMetadata(issuer: string): ProviderMiddleware {
  return async (ctx, next) => {
    await next();
    if ((ctx.req as MetadataRequest).platformMetadata && ctx.status === 200) {
      const body = { ...(ctx.body as Record<string, unknown>) };
      for (const key of OIDC_ONLY_METADATA) delete body[key];
      // oidc-provider names endpoints after the request's host; publish them on the issuer's.
      for (const [key, value] of Object.entries(body)) {
        if (key.endsWith('_endpoint') && typeof value === 'string') {
          const url = new URL(value);
          body[key] = `${issuer}${url.pathname}`;
        }
      }
      body.scopes_supported = [...ALL_SCOPES];
      body.grant_types_supported = ['authorization_code', 'refresh_token', 'client_credentials'];
      ctx.body = body;
    }
  };
}
