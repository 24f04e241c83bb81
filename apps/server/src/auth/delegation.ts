import { ALL_SCOPES, isScope, readScopesForEvents, type Scope } from '@platform/contract';
import { ProblemException } from '../common/problem.exception';
import { toIso } from '../common/timestamp';
import type { Principal } from '../common/principal';

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

/**
 * Taking control of an existing credential (revoking it, rotating its secret, deleting it) needs
 * the same: a token may act only on credentials whose scopes it holds itself, so `tokens:write`
 * cannot revoke an administrator's token, nor `oauth_clients:write` take over an `all` client.
 * Stored scopes no longer offered (`events:write`) are ignored, as everywhere they are read.
 */
export function assertCovers(
  principal: Principal,
  stored: readonly string[],
  action: string,
  what: string,
): void {
  const missing = stored.filter(isScope).filter((scope) => !principal.scopes.has(scope));
  if (missing.length) {
    throw new ProblemException(
      'forbidden',
      `A token cannot ${action} ${what} that has scopes the calling token lacks: ${missing.join(', ')}`,
    );
  }
}

/**
 * A webhook endpoint delivers its events' data, so `webhooks:write` must not read more than the
 * token could through the API: every event type needs its resource's read scope (the contract's
 * `EVENT_READ_SCOPES`), and `*` needs them all.
 */
export function assertCanSubscribe(principal: Principal, events: readonly string[]): void {
  const missing = readScopesForEvents(events).filter((scope) => !principal.scopes.has(scope));
  if (missing.length) {
    throw new ProblemException(
      'forbidden',
      `A webhook endpoint receives the data of its events, so the calling token must be able to read them; it lacks: ${missing.join(', ')} (for ${events.join(', ')})`,
    );
  }
}

/** The earlier of two expiries, null being never: how long a credential bound to both may live. */
export function earlierExpiry(a: Date | null, b: Date | null): Date | null {
  if (!a) return b;
  if (!b) return a;
  return new Date(Math.min(a.getTime(), b.getTime()));
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
