import type { OAuthPrincipal, Principal, TokenRefusal } from '../common/principal';

/**
 * A token resolver's answer. On success it also says what the token cache (token-cache.ts) keeps
 * beside the principal: when the clock alone ends the token, and, for a personal access token,
 * its `last_used_at` (so a cached token is still touched at most once a minute).
 */
export type ResolvedToken<P extends Principal> =
  | { ok: true; principal: P; endsAtMs: number | null; lastUsedAtMs?: number | null }
  | { ok: false; reason: TokenRefusal };

/**
 * Resolves OAuth access tokens for the bearer strategy. Declared here and implemented by the
 * OAuth module (`OAuthAccessTokens`), which `RequestPipelineModule.forRoot` is given by the app module:
 * the dependency runs oauth → auth only, so the two folders do not import each other.
 */
export abstract class OAuthAccessTokenResolver {
  abstract authenticate(token: string): Promise<ResolvedToken<OAuthPrincipal>>;
}
