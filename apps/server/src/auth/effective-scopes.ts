import { type Role, ROLE_SCOPES, ROLES, type Scope } from '@platform/contract';

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
