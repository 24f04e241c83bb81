import { type Role, ROLE_SCOPES, ROLES, type Scope } from '@platform/contract';
import type { AuthenticationResult } from './token-resolver';

declare module '../common/http-context' {
  /** What the request pipeline (request-pipeline.guard.ts) attaches about the caller. */
  interface PlatformRequest {
    /** The authenticated caller (set with a successful `authentication`). */
    principal?: Principal;
    /** The bearer token's outcome, resolved once per request (see BearerStrategy.authenticate). */
    authentication?: AuthenticationResult;
  }
}

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

/**
 * A token acting for a member never does more than the member's role allows: its scopes are
 * cut to `ROLE_SCOPES[role]` each time the principal is built, so a demotion applies on the
 * next request. Without a member the token's own scopes stand.
 */
export function effectiveScopes(scopes: Iterable<Scope>, role: Role | null): Set<Scope> {
  if (!role) return new Set(scopes);
  const allowed = new Set<Scope>(ROLE_SCOPES[role]);
  return new Set([...scopes].filter((scope) => allowed.has(scope)));
}

/** A role read from the database; anything else (no member row) is null. */
export function roleOf(value: unknown): Role | null {
  return (ROLES as readonly unknown[]).includes(value) ? (value as Role) : null;
}
