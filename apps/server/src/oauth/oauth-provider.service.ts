import { generateKeyPairSync } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { ALL_SCOPES, isScope, OAUTH_PATHS } from '@platform/contract';
import type Provider from 'oidc-provider';
import type { AdapterPayload, Configuration, KoaContextWithOIDC } from 'oidc-provider';
import type { DataSource } from 'typeorm';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/env';
import { deriveKey, resolveSecretsKey } from '../security/crypto';
import { Clock } from '../common/clock';
import { typeormAdapter } from './adapter';
import type { OAuthClientRecord } from './entities';
import { apiResource, oauthIssuer } from './issuer';
import { clientSecretMatches, OAuthClientsService } from './oauth-clients.service';
import { loadOidcProvider } from './oidc-provider';
import {
  isPortalClient,
  PORTAL_CLIENT_ID,
  PORTAL_SIGN_OUT_PATH,
  portalClientMetadata,
} from './portal-client';
import { AuditService } from '../audit/audit.service';
import { normalizeIp } from '../rate-limit/organization-throttler.guard';
import { escapeHtml, page, SIGN_OUT_CSP, signedOutPage, signOutPage } from './pages';
import { toProviderRealm } from './realm';
import { UsersService } from './users.service';

/** Lifetimes, in seconds. Access tokens are short; a refresh token lives 30 days from its rotation. */
export const OAUTH_TTL = {
  accessToken: 3600,
  authorizationCode: 60,
  refreshToken: 30 * 24 * 3600,
  grant: 365 * 24 * 3600,
  interaction: 600,
  session: 14 * 24 * 3600,
} as const;

/** Defined by the contract, which publishes them in the OpenAPI document's OAuth 2.0 scheme. */
export { OAUTH_PATHS };

/** oidc-provider serves its metadata here; we publish it at the RFC 8414 path instead. */
const OIDC_DISCOVERY_PATH = '/.well-known/openid-configuration';

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

interface MetadataRequest extends IncomingMessage {
  platformMetadata?: boolean;
}

/**
 * The authorization server: oidc-provider (OpenID-certified, maintained) configured as a plain
 * OAuth 2.0 server per RFC 9700. Grants: authorization code with PKCE (S256, required for
 * every client), refresh tokens (rotated; reuse revokes the whole grant), client credentials.
 * Tokens are opaque, stored hashed through our TypeORM adapter, and bound to one resource (this
 * API), the client, and its organization.
 */
@Injectable()
export class OAuthProviderService {
  readonly provider: Provider;
  readonly issuer: string;
  /** The resource indicator (RFC 8707) every access token is issued for. */
  readonly resource: string;
  private readonly logger = new Logger('OAuth');

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    @InjectDataSource() dataSource: DataSource,
    private readonly clients: OAuthClientsService,
    users: UsersService,
    clock: Clock,
    audit: AuditService,
  ) {
    this.issuer = oauthIssuer(config);
    this.resource = apiResource(config);
    const oidc = loadOidcProvider();
    const { errors } = oidc;
    const resource = this.resource;
    const issuer = this.issuer;
    const clientsService = this.clients;

    const configuration: Configuration = {
      adapter: typeormAdapter(
        dataSource,
        describeClient,
        (id) => clientsService.findLiveById(id),
        (id) => (isPortalClient(id) ? portalClientMetadata(issuer) : undefined),
        () => new errors.InvalidGrant('grant request is invalid'),
        clock,
      ),
      // At the token endpoint an account exists for a client only if it is a member of the
      // client's organization, so no code or refresh token yields a token across organizations.
      // (During authorization the consent page makes the same check; oidc-provider cannot take
      // a missing account for a live session there.)
      findAccount: async (ctx, id) => {
        const user = await users.findById(id);
        if (!user) return undefined;
        const clientId = ctx.oidc?.client?.clientId;
        // The portal's client belongs to no organization: its tokens act for the user's own.
        if (clientId && ctx.oidc.route === 'token' && !isPortalClient(clientId)) {
          const client = await clientsService.findById(clientId);
          if (client?.organizationId !== user.organizationId) return undefined;
        }
        return toProviderRealm({
          accountId: user.id,
          claims: () => toProviderRealm({ sub: user.id }),
        });
      },
      // Signed cookies for the login/consent interaction; the key is derived from the server's
      // secrets key, so every instance of a deployment accepts the others' cookies.
      // The portal is first-party: a member who signs in to it approves nothing more, so its
      // grant is made (or widened to the scopes asked for) here and no consent page is shown.
      // Every other client keeps the default: the grant its user approved on the consent page.
      loadExistingGrant: async (ctx) => {
        const client = ctx.oidc.client;
        const session = ctx.oidc.session;
        if (!client || !session) return undefined;
        const grantId = ctx.oidc.result?.consent?.grantId ?? session.grantIdFor(client.clientId);
        const existing = grantId ? await ctx.oidc.provider.Grant.find(grantId) : undefined;
        if (!isPortalClient(client.clientId) || !session.accountId) return existing;
        const grant =
          existing?.accountId === session.accountId
            ? existing
            : new ctx.oidc.provider.Grant(
                toProviderRealm({ clientId: client.clientId, accountId: session.accountId }),
              );
        const requested = ctx.oidc.params?.scope;
        const scope = typeof requested === 'string' ? requested : '';
        // As the consent page grants them: our scopes are also oidc-provider's OIDC scopes.
        grant.addOIDCScope(scope);
        grant.addResourceScope(resource, scope);
        await grant.save();
        return grant;
      },
      cookies: {
        keys: [deriveKey(resolveSecretsKey(config), 'platform oauth cookies')],
        long: { signed: true, httpOnly: true, sameSite: 'lax' },
        short: { signed: true, httpOnly: true, sameSite: 'lax' },
      },
      // Nothing is signed with this key (tokens are opaque, no ID tokens), but the library wants
      // one. Made per process, so it is never stored anywhere.
      jwks: { keys: [signingKey()] },
      clientAuthMethods: ['client_secret_basic', 'none'],
      // oidc-provider checks a browser's Origin against this for public clients' token and
      // revocation requests. Only the portal calls from a browser, and only from this origin.
      clientBasedCORS: (_ctx, origin, client) =>
        isPortalClient(client.clientId) && origin === new URL(issuer).origin,
      // The only key is ES256 (and no ID tokens are issued); clients default to it.
      clientDefaults: { id_token_signed_response_alg: 'ES256' },
      responseTypes: ['code'],
      pkce: { required: () => true },
      allowOmittingSingleRegisteredRedirectUri: false,
      rotateRefreshToken: true,
      issueRefreshToken: (_ctx, client) => client.grantTypeAllowed('refresh_token'),
      expiresWithSession: () => false,
      ttl: {
        AccessToken: OAUTH_TTL.accessToken,
        ClientCredentials: OAUTH_TTL.accessToken,
        AuthorizationCode: OAUTH_TTL.authorizationCode,
        RefreshToken: OAUTH_TTL.refreshToken,
        Grant: OAUTH_TTL.grant,
        Interaction: OAUTH_TTL.interaction,
        Session: OAUTH_TTL.session,
      },
      // Client metadata `scope` (a client's allowed scopes) must come from this list.
      scopes: [...ALL_SCOPES],
      claims: {},
      features: {
        devInteractions: { enabled: false },
        // Sender-constrained (DPoP) tokens would need the API to check proofs, which it does
        // not; PAR is not offered either. Off, so neither is advertised or issued.
        dPoP: { enabled: false },
        pushedAuthorizationRequests: { enabled: false },
        userinfo: { enabled: false },
        // Signing out of the portal ends the sign-in session too, so the next "Sign in" on a
        // shared computer asks for a password instead of approving the portal silently.
        rpInitiatedLogout: {
          enabled: true,
          logoutSource: (ctx, form) => {
            ctx.type = 'html';
            // The one form posts to the confirmation endpoint, on this origin.
            ctx.set('Content-Security-Policy', SIGN_OUT_CSP);
            ctx.body = signOutPage(form);
            return Promise.resolve();
          },
          postLogoutSuccessSource: (ctx) => {
            ctx.type = 'html';
            ctx.body = signedOutPage();
            return Promise.resolve();
          },
        },
        clientCredentials: { enabled: true },
        revocation: {
          enabled: true,
          // RFC 7009 §2.1: a client revokes only tokens issued to it.
          allowedPolicy: (_ctx, client, token) => token.clientId === client.clientId,
        },
        introspection: {
          enabled: true,
          // RFC 7662 for confidential clients, about tokens of their own organization.
          allowedPolicy: async (_ctx, client, token) => {
            if (client.clientAuthMethod === 'none') return false;
            if (!token.clientId || token.clientId === client.clientId) return true;
            const [caller, issuedTo] = await Promise.all([
              clientsService.findById(client.clientId),
              clientsService.findById(token.clientId),
            ]);
            return !!caller && caller.organizationId === issuedTo?.organizationId;
          },
        },
        resourceIndicators: {
          enabled: true,
          defaultResource: () => resource,
          useGrantedResource: () => true,
          getResourceServerInfo: (_ctx, indicator, client) => {
            if (indicator !== resource) throw new errors.InvalidTarget();
            return toProviderRealm({
              scope: client.scope ?? '',
              audience: resource,
              accessTokenTTL: OAUTH_TTL.accessToken,
              accessTokenFormat: 'opaque' as const,
            });
          },
        },
      },
      routes: {
        authorization: OAUTH_PATHS.authorization,
        token: OAUTH_PATHS.token,
        revocation: OAUTH_PATHS.revocation,
        introspection: OAUTH_PATHS.introspection,
        jwks: OAUTH_PATHS.jwks,
        end_session: OAUTH_PATHS.endSession,
      },
      interactions: { url: (_ctx, interaction) => `${OAUTH_PATHS.interaction}/${interaction.uid}` },
      renderError: (ctx, out) => {
        ctx.type = 'html';
        ctx.body = page(
          'Sign-in request refused',
          `<h1>This sign-in request cannot continue</h1>
          <p><strong>${escapeHtml(String(out.error))}</strong>: ${escapeHtml(String(out.error_description ?? ''))}</p>
          <p>Return to the application and try again, or tell its developer.</p>`,
        );
      },
    };

    this.provider = new oidc.Provider(issuer, toProviderRealm(configuration));
    this.provider.proxy = config.trustProxy;
    // Koa would print stack traces itself; errors go to our log as kind + message instead.
    (this.provider as unknown as { silent: boolean }).silent = true;
    this.provider.on('server_error', (_ctx: unknown, error: Error) =>
      this.logger.error(`OAuth server error: ${error.name}: ${error.message}`),
    );

    // Hashed client secrets: oidc-provider compares secrets itself, so the comparison is
    // replaced by one against the SHA-256 we store (constant time).
    this.provider.Client.prototype.compareClientSecret = function (
      this: {
        clientSecret?: string;
      },
      presented: string,
    ) {
      return clientSecretMatches(this.clientSecret ?? null, presented);
    };

    // No CORS here either, as on the API: oidc-provider answers preflights and adds
    // Access-Control-* headers on its own (clientBasedCORS refuses only later, at client
    // authentication), so they are taken off every response of the authorization server.
    this.provider.use(async (ctx: KoaContextWithOIDC, next: () => Promise<void>) => {
      try {
        await next();
      } finally {
        for (const name of Object.keys(ctx.response.headers)) {
          if (name.toLowerCase().startsWith('access-control-')) ctx.remove(name);
        }
      }
    });

    // The portal's "Sign out": ends this browser's sign-in session and revokes the portal token
    // in one step, with no confirmation page a person could leave half-way (a shared computer).
    // The portal's bearer token, which only its page holds, stands in for that page's
    // anti-forgery token: another site cannot send it, so cannot sign a member out.
    this.provider.use(async (ctx: KoaContextWithOIDC, next: () => Promise<void>) => {
      if (ctx.path !== PORTAL_SIGN_OUT_PATH) return next();
      if (ctx.method !== 'POST') {
        ctx.status = 405;
        ctx.set('Allow', 'POST');
        return;
      }
      const bearer = /^Bearer ([A-Za-z0-9\-._~+/]+=*)$/.exec(ctx.get('authorization'))?.[1];
      const token = bearer ? await this.provider.AccessToken.find(bearer) : undefined;
      if (!token || !isPortalClient(token.clientId)) {
        ctx.status = 401;
        return;
      }
      const session = await this.provider.Session.get(
        this.provider.createContext(ctx.req, ctx.res),
      );
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
        this.logger.error(`Could not audit a portal sign-out: ${(error as Error).message}`);
      }
    });

    // Revoking a token (RFC 7009) and signing out are recorded in the audit log of the
    // organization they belong to: the client's, or for the portal the member's. Who signs out
    // is read before the confirmation ends their session.
    const signingOut = new WeakMap<object, string>();
    this.provider.use(async (ctx: KoaContextWithOIDC, next: () => Promise<void>) => {
      if (ctx.method === 'POST' && ctx.path === `${OAUTH_PATHS.endSession}/confirm`) {
        const session = await this.provider.Session.get(
          this.provider.createContext(ctx.req, ctx.res),
        );
        if (session.accountId) signingOut.set(ctx.req, session.accountId);
      }
      await next();
      if (ctx.method !== 'POST' || ctx.status >= 400) return;
      const path = ctx.path;
      if (path !== OAUTH_PATHS.revocation && path !== `${OAUTH_PATHS.endSession}/confirm`) return;
      try {
        await auditOAuthRequest(ctx, path === OAUTH_PATHS.revocation ? 'revoke' : 'sign_out');
      } catch (error) {
        this.logger.error(`Could not audit ${path}: ${(error as Error).message}`);
      }
    });
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
      const client = isPortalClient(clientId) ? null : await clientsService.findById(clientId);
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

    this.provider.use(async (ctx: KoaContextWithOIDC, next: () => Promise<void>) => {
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
    });

    function describeClient(record: OAuthClientRecord): AdapterPayload {
      const grants = record.grantTypes.split(' ');
      return {
        client_id: record.id,
        client_name: record.name,
        ...(record.type === 'confidential'
          ? {
              client_secret: record.secretHash ?? undefined,
              token_endpoint_auth_method: 'client_secret_basic',
            }
          : { token_endpoint_auth_method: 'none' }),
        application_type: record.type === 'public' ? 'native' : 'web',
        grant_types: grants,
        response_types: grants.includes('authorization_code') ? ['code'] : [],
        redirect_uris: record.redirectUris,
        // Only scopes still offered: oidc-provider refuses a client naming an unknown one.
        scope: record.scopes.split(' ').filter(isScope).join(' '),
      };
    }
  }

  /** Whether the express layer should hand this request to the authorization server. */
  handles(path: string): boolean {
    return (
      path === OAUTH_PATHS.metadata ||
      (path.startsWith('/oauth/') && !path.startsWith(`${OAUTH_PATHS.interaction}/`))
    );
  }

  /** Express middleware: serves the authorization server's endpoints and its metadata. */
  middleware() {
    const callback = this.provider.callback();
    return (req: IncomingMessage & { path?: string }, res: ServerResponse, next: () => void) => {
      const path = req.path ?? new URL(req.url ?? '/', 'http://x').pathname;
      if (!this.handles(path)) return next();
      const pattern = routePatternOf(path);
      if (pattern) (req as IncomingMessage & { routePattern?: string }).routePattern = pattern;
      if (path === OAUTH_PATHS.metadata) {
        (req as MetadataRequest).platformMetadata = true;
        req.url = OIDC_DISCOVERY_PATH;
      }
      void callback(req, res);
    };
  }
}

const KNOWN_PATHS = new Set<string>(Object.values(OAUTH_PATHS));

/** For logs and metrics: the endpoint, with the interaction id of a resumed request elided. */
function routePatternOf(path: string): string | undefined {
  if (KNOWN_PATHS.has(path) || path === PORTAL_SIGN_OUT_PATH) return path;
  if (path.startsWith(`${OAUTH_PATHS.authorization}/`)) return `${OAUTH_PATHS.authorization}/:uid`;
  return undefined;
}

function signingKey() {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return { ...privateKey.export({ format: 'jwk' }), alg: 'ES256', use: 'sig' };
}
