import type { Scope } from '@platform/contract';

interface PrincipalBase {
  organizationId: string;
  /** Requests per rolling minute for the organization. */
  rateLimitPerMinute: number;
  scopes: ReadonlySet<Scope>;
  expiresAt: Date | null;
}

export interface PersonalAccessTokenPrincipal extends PrincipalBase {
  kind: 'personal_access_token';
  tokenId: string;
}

export interface OAuthPrincipal extends PrincipalBase {
  kind: 'oauth_access_token';
  clientId: string;
  /** The user who approved the client; null for client credentials (the client acts for the organization). */
  userId: string | null;
  /** The user's grant the token came from; null for client credentials. */
  grantId: string | null;
}

/** Who is calling: resolved from the bearer token on every request, never cached across requests. */
export type Principal = PersonalAccessTokenPrincipal | OAuthPrincipal;
