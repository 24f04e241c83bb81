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

export type ScopeResource = (typeof SCOPE_RESOURCES)[number];
export type Scope = `${ScopeResource}:${'read' | 'write'}`;

export const ALL_SCOPES: readonly Scope[] = SCOPE_RESOURCES.flatMap((resource) => [
  `${resource}:read` as const,
  `${resource}:write` as const,
]);

export function isScope(value: string): value is Scope {
  return (ALL_SCOPES as readonly string[]).includes(value);
}
