/**
 * OAuth-style scopes. `<resource>:write` does not imply `<resource>:read`.
 * Every operation in the contract names the one scope it needs (see `OperationMetadata`).
 */
export const SCOPE_RESOURCES = [
  'students',
  'courses',
  'enrollments',
  'payments',
  'exam_results',
  'webhooks',
  'events',
  'tokens',
  'oauth_clients',
] as const;

/**
 * Resources that can only be read: events are written by the changes they record, never over
 * the API, so `events:write` would grant nothing. Tokens stored with it keep working; it is
 * ignored when read back, and refused (400) when asked for.
 */
export const READ_ONLY_SCOPE_RESOURCES = ['events'] as const;

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
