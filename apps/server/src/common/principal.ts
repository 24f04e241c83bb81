import type { Role, Scope } from '@platform/contract';

/*
 * Who is calling, as the request pipeline (auth/) resolves it from the bearer token and every
 * module reads it: a platform type, so that no module imports auth/ to name its caller.
 */

interface PrincipalBase {
  organizationId: string;
  /** Requests per rolling minute for the organization. */
  rateLimitPerMinute: number;
  /** Effective scopes: the token's, within its member's role when it acts for one. */
  scopes: ReadonlySet<Scope>;
  expiresAt: Date | null;
  /**
   * The member the token acts for: the user who approved an OAuth client, or the owner of a
   * personal access token made over the API. Null when it acts for the organization itself
   * (client credentials, a token an operator made).
   */
  userId: string | null;
  /** That member's role as of this request; null without a member. */
  role: Role | null;
}

export interface PersonalAccessTokenPrincipal extends PrincipalBase {
  kind: 'personal_access_token';
  tokenId: string;
}

export interface OAuthPrincipal extends PrincipalBase {
  kind: 'oauth_access_token';
  clientId: string;
  /** The user's grant the token came from; null for client credentials. */
  grantId: string | null;
}

/**
 * Who is calling: resolved from the bearer token, or taken from the token cache (token-cache.ts),
 * which the database invalidates on any change that could alter it. Shared by the requests the
 * cache answers, so never modified.
 */
export type Principal = PersonalAccessTokenPrincipal | OAuthPrincipal;

/** Why a token was refused by the service that knows its kind. */
export type TokenRefusal = 'malformed' | 'unknown' | 'expired' | 'revoked';

/** Why a request is not authenticated; the pipeline answers each with its own 401 detail. */
export type AuthenticationFailure = 'missing' | TokenRefusal;

export type AuthenticationResult<
  P extends Principal = Principal,
  F extends AuthenticationFailure = AuthenticationFailure,
> = { ok: true; principal: P } | { ok: false; reason: F };
