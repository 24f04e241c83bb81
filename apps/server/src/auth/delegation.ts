import { ALL_SCOPES, type Scope } from '@platform/contract';
import { ProblemException } from '../common/problem.exception';
import { toIso } from '../common/timestamp';
import type { Principal } from './principal';

/** `all` → every scope; duplicates dropped. Validation of the names is the contract's. */
export function expandScopes(scopes: readonly string[]): Scope[] {
  return scopes.includes('all') ? [...ALL_SCOPES] : [...new Set(scopes as Scope[])];
}

/**
 * A credential made over the API never holds more than the caller's own token: its scopes are
 * a subset of the caller's (403 otherwise), so `tokens:write` or `oauth_clients:write` cannot
 * be turned into every scope.
 */
export function assertScopesWithin(principal: Principal, scopes: readonly Scope[]): void {
  const missing = scopes.filter((scope) => !principal.scopes.has(scope));
  if (missing.length) {
    throw new ProblemException(
      'forbidden',
      `A credential cannot get scopes the calling token lacks: ${missing.join(', ')}`,
    );
  }
}

/** …and a token made over the API expires no later than the token that made it. */
export function assertExpiryWithin(principal: Principal, expiresAt: Date | null): void {
  if (!principal.expiresAt) return;
  if (!expiresAt || expiresAt.getTime() > principal.expiresAt.getTime()) {
    throw new ProblemException(
      'validation_error',
      `expires_at must be at or before ${toIso(principal.expiresAt)}, when the calling token expires: a token cannot outlive the one that creates it`,
      {
        errors: [
          { path: 'body.expires_at', message: 'later than the calling token', code: 'too_late' },
        ],
      },
    );
  }
}
