import type { MemberRole, Scope } from '@platform/client';

/**
 * What a member of each role may hold, the same rule as the contract's `ROLE_SCOPES` (admin:
 * every scope; developer: all but managing members, renaming the organization and reading the
 * audit log; viewer: reads only, not the audit log nor the request log). The portal only uses it to decide what to
 * offer: the server applies the real rule on every request, and its refusals stay visible.
 */
const DEVELOPER_EXCLUDED: ReadonlySet<Scope> = new Set([
  'members:write',
  'organization:write',
  'audit_log:read',
]);

export function roleAllows(role: MemberRole, scope: Scope): boolean {
  if (role === 'admin') return true;
  if (role === 'developer') return !DEVELOPER_EXCLUDED.has(scope);
  return scope.endsWith(':read') && scope !== 'audit_log:read' && scope !== 'request_logs:read';
}

/** What the session may do: its token's scopes, within the member's role. */
export interface Abilities {
  role: MemberRole;
  can: (scope: Scope) => boolean;
  /** Whether the session holds any write scope (a viewer's holds none). */
  writes: boolean;
}

export function abilitiesOf(role: MemberRole, tokenScopes: readonly Scope[]): Abilities {
  const held = new Set(tokenScopes);
  const can = (scope: Scope) => held.has(scope) && roleAllows(role, scope);
  return { role, can, writes: tokenScopes.some((scope) => scope.endsWith(':write') && can(scope)) };
}
