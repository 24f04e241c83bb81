/**
 * Where the authorization server answers. The server mounts its OAuth 2.0 endpoints here, the
 * OpenAPI document names them in its security scheme, and the SDKs find the token endpoint from it.
 */
export const OAUTH_PATHS = {
  authorization: '/oauth/authorize',
  token: '/oauth/token',
  revocation: '/oauth/revoke',
  introspection: '/oauth/introspect',
  jwks: '/oauth/jwks',
  interaction: '/oauth/interaction',
  /** RP-initiated logout: ends the sign-in session (the portal's "Sign out" goes here). */
  endSession: '/oauth/session/end',
  metadata: '/.well-known/oauth-authorization-server',
} as const;
