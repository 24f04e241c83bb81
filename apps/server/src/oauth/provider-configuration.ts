import { generateKeyPairSync } from 'node:crypto';
import { ALL_SCOPES, isScope, OAUTH_PATHS } from '@platform/contract';
import type {
  AdapterPayload,
  Configuration,
  errors as OidcErrors,
  FindAccount,
  KoaContextWithOIDC,
} from 'oidc-provider';
import type { DataSource } from 'typeorm';
import type { Clock } from '../common/clock';
import type { AppConfig } from '../config/env';
import { deriveKey, resolveSecretsKey } from '../security/crypto';
import { typeormAdapter } from './adapter';
import type { OAuthClientRecord } from './entities';
import type { OAuthClientsService } from './oauth-clients.service';
import { escapeHtml, page, SIGN_OUT_CSP, signedOutPage, signOutPage } from './pages';
import { isPortalClient, portalClientMetadata } from './portal-client';
import { toProviderRealm } from './realm';
import type { UsersService } from './users.service';

/** Lifetimes, in seconds. Access tokens are short; a refresh token lives 30 days from its rotation. */
export const OAUTH_TTL = {
  accessToken: 3600,
  authorizationCode: 60,
  refreshToken: 30 * 24 * 3600,
  grant: 365 * 24 * 3600,
  interaction: 600,
  session: 14 * 24 * 3600,
} as const;

/** What the authorization server's configuration reads. */
export interface ProviderSetup {
  config: AppConfig;
  dataSource: DataSource;
  clients: OAuthClientsService;
  users: UsersService;
  clock: Clock;
  /** oidc-provider's error classes, from the module loadOidcProvider loaded. */
  errors: typeof OidcErrors;
  issuer: string;
  /** The resource indicator (RFC 8707) every access token is issued for. */
  resource: string;
}

/** oidc-provider's configuration: a plain OAuth 2.0 server per RFC 9700 (OAuthProviderService). */
export function providerConfiguration(setup: ProviderSetup): Configuration {
  const { config, clients, issuer, errors } = setup;
  return {
    adapter: typeormAdapter(
      setup.dataSource,
      describeClient,
      (id) => clients.findLiveById(id),
      (id) => (isPortalClient(id) ? portalClientMetadata(issuer) : undefined),
      () => new errors.InvalidGrant('grant request is invalid'),
      setup.clock,
    ),
    findAccount: accountFinder(setup.users, clients),
    loadExistingGrant: existingGrantLoader(setup.resource),
    // Signed cookies for the login/consent interaction; the key is derived from the server's
    // secrets key, so every instance of a deployment accepts the others' cookies.
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
    features: providerFeatures(setup),
    routes: {
      authorization: OAUTH_PATHS.authorization,
      token: OAUTH_PATHS.token,
      revocation: OAUTH_PATHS.revocation,
      introspection: OAUTH_PATHS.introspection,
      jwks: OAUTH_PATHS.jwks,
      end_session: OAUTH_PATHS.endSession,
    },
    interactions: { url: (_ctx, interaction) => `${OAUTH_PATHS.interaction}/${interaction.uid}` },
    renderError,
  };
}

/** What is on (client credentials, revocation, introspection, resource indicators) and off. */
function providerFeatures({ clients, errors, resource }: ProviderSetup): Configuration['features'] {
  return {
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
          clients.findById(client.clientId),
          clients.findById(token.clientId),
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
  };
}

/**
 * At the token endpoint an account exists for a client only if it is a member of the client's
 * organization, so no code or refresh token yields a token across organizations. (During
 * authorization the consent page makes the same check; oidc-provider cannot take a missing
 * account for a live session there.)
 */
function accountFinder(users: UsersService, clients: OAuthClientsService): FindAccount {
  return async (ctx, id) => {
    const user = await users.findById(id);
    if (!user) return undefined;
    const clientId = ctx.oidc?.client?.clientId;
    // The portal's client belongs to no organization: its tokens act for the user's own.
    if (clientId && ctx.oidc.route === 'token' && !isPortalClient(clientId)) {
      const client = await clients.findById(clientId);
      if (client?.organizationId !== user.organizationId) return undefined;
    }
    return toProviderRealm({
      accountId: user.id,
      claims: () => toProviderRealm({ sub: user.id }),
    });
  };
}

/**
 * The portal is first-party: a member who signs in to it approves nothing more, so its grant is
 * made (or widened to the scopes asked for) here and no consent page is shown. Every other
 * client keeps the default: the grant its user approved on the consent page.
 */
function existingGrantLoader(resource: string): Configuration['loadExistingGrant'] {
  return async (ctx: KoaContextWithOIDC) => {
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
  };
}

const renderError: Configuration['renderError'] = (ctx, out) => {
  ctx.type = 'html';
  ctx.body = page(
    'Sign-in request refused',
    `<h1>This sign-in request cannot continue</h1>
          <p><strong>${escapeHtml(String(out.error))}</strong>: ${escapeHtml(String(out.error_description ?? ''))}</p>
          <p>Return to the application and try again, or tell its developer.</p>`,
  );
};

/** A client registered through the API or the CLI, as oidc-provider reads client metadata. */
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

function signingKey() {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return { ...privateKey.export({ format: 'jwk' }), alg: 'ES256', use: 'sig' };
}
