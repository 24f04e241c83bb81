import { ALL_SCOPES } from '@platform/contract';
import type { AdapterPayload } from 'oidc-provider';

/**
 * The developer portal's own OAuth client (apps/portal, served under `/portal`): first-party,
 * public (PKCE, no secret), built into the server rather than stored in `oauth_clients`, since
 * it belongs to no organization: a member of any organization signs in with it and gets a token
 * for their own organization (the user's, see OAuthAccessTokens). Its id has the shape of a
 * client id (a ULID of time zero, which no registered client can get), so `GET /v1/token` and
 * every other place a client id appears keep their documented `oac_…` form.
 */
export const PORTAL_CLIENT_ID = 'oac_0000000000000000000000P0RT';
export const PORTAL_CLIENT_NAME = 'Platform portal';
export const PORTAL_PATH = '/portal';
/** The portal's one-step sign-out (POST, with the portal's bearer token): see OAuthProviderService. */
export const PORTAL_SIGN_OUT_PATH = '/oauth/session/end/portal';
export const PORTAL_CALLBACK_PATH = `${PORTAL_PATH}/callback`;

export function isPortalClient(clientId: string | null | undefined): boolean {
  return clientId === PORTAL_CLIENT_ID;
}

/**
 * The client as oidc-provider sees it: code + PKCE only (no refresh token: a session is one
 * access token, and signing in again is a redirect while the sign-in cookie lives), the one
 * redirect URI on the issuer's own origin, and every scope (a member's role caps what a token
 * acting for them may do, on the server).
 */
export function portalClientMetadata(issuer: string): AdapterPayload {
  return {
    client_id: PORTAL_CLIENT_ID,
    client_name: PORTAL_CLIENT_NAME,
    token_endpoint_auth_method: 'none',
    application_type: 'web',
    grant_types: ['authorization_code'],
    response_types: ['code'],
    redirect_uris: [`${issuer}${PORTAL_CALLBACK_PATH}`],
    // Where signing out returns (RP-initiated logout, OAUTH_PATHS.endSession).
    post_logout_redirect_uris: [`${issuer}${PORTAL_PATH}/`],
    scope: ALL_SCOPES.join(' '),
  };
}
