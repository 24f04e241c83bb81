import { RESOURCE_SCOPES } from './registry';

/**
 * OAuth-style scopes. `<resource>:write` does not imply `<resource>:read`.
 * Every operation in the contract names the one scope it needs (see `OperationMetadata`).
 */
export const SCOPE_RESOURCES = [
  // The resources' scopes (registry.ts), then the API's own.
  ...RESOURCE_SCOPES,
  'webhooks',
  'events',
  'tokens',
  'oauth_clients',
  'members',
  'organization',
  'audit_log',
  'exports',
  'imports',
  'request_logs',
] as const;

/**
 * Resources that can only be read: events are written by the changes they record, never over
 * the API, so `events:write` would grant nothing. Tokens stored with it keep working; it is
 * ignored when read back, and refused (400) when asked for.
 */
export const READ_ONLY_SCOPE_RESOURCES = ['events', 'audit_log', 'request_logs'] as const;

export type ScopeResource = (typeof SCOPE_RESOURCES)[number];
export type Scope = Exclude<
  `${ScopeResource}:${'read' | 'write'}`,
  `${(typeof READ_ONLY_SCOPE_RESOURCES)[number]}:write`
>;

export const ALL_SCOPES: readonly Scope[] = SCOPE_RESOURCES.flatMap((resource): Scope[] =>
  (READ_ONLY_SCOPE_RESOURCES as readonly string[]).includes(resource)
    ? [`${resource}:read` as Scope]
    : [`${resource}:read` as Scope, `${resource}:write` as Scope],
);

export function isScope(value: string): value is Scope {
  return (ALL_SCOPES as readonly string[]).includes(value);
}

/**
 * What a member of an organization may do, as the most a token acting for them can carry: a
 * token's scopes are intersected with its user's role on every request, so a demotion applies
 * at once. `viewer` reads (not the audit log nor the request log); `developer` also writes
 * data, manages tokens, webhooks and OAuth apps and reads the request log (its own integrations'
 * calls, to debug them); `admin` also manages members and the organization and reads the audit log.
 */
export const ROLES = ['admin', 'developer', 'viewer'] as const;
export type Role = (typeof ROLES)[number];

const ADMIN_ONLY: readonly Scope[] = ['members:write', 'organization:write', 'audit_log:read'];
/**
 * Admins and developers: the request log shows which credentials call which routes, how often
 * and how they fail, which is for the people who build integrations, not for read-only members.
 */
const DEVELOPER_UP: readonly Scope[] = ['request_logs:read'];

export const ROLE_SCOPES: Readonly<Record<Role, readonly Scope[]>> = {
  admin: ALL_SCOPES,
  developer: ALL_SCOPES.filter((scope) => !ADMIN_ONLY.includes(scope)),
  viewer: ALL_SCOPES.filter(
    (scope) =>
      scope.endsWith(':read') && !ADMIN_ONLY.includes(scope) && !DEVELOPER_UP.includes(scope),
  ),
};
