import { type AppRoute, type AppRouter, isAppRoute } from '@ts-rest/core';
import { contract } from './contract';
import { operationMetadata } from './operation';

export const SCOPE_TABLE_START =
  '<!-- scope-table:start (generated: pnpm --filter @platform/contract scope-table) -->';
export const SCOPE_TABLE_END = '<!-- scope-table:end -->';

function routesOf(router: AppRouter, at: string[] = []): { operation: string; route: AppRoute }[] {
  return Object.entries(router).flatMap(([key, entry]) =>
    isAppRoute(entry)
      ? [{ operation: [...at, key].join('.'), route: entry }]
      : routesOf(entry, [...at, key]),
  );
}

/**
 * The API guide's operation → scope table (docs/api-guide.md), from the contract itself: the SDK method, the HTTP
 * route, and the scope a token needs. Kept out of Prettier's reach so the generated text is
 * exactly what the drift test compares.
 */
export function scopeTable(): string {
  const rows = routesOf(contract as unknown as AppRouter).map(({ operation, route }) => {
    const scope = operationMetadata(route)?.scope;
    if (scope === undefined) throw new Error(`${route.method} ${route.path} declares no scope`);
    const none = operationMetadata(route)?.requiresUser
      ? 'any token acting for a member (any scope)'
      : 'any valid token';
    return `| \`${operation}\` | \`${route.method} ${route.path}\` | ${scope === null ? none : `\`${scope}\``} |`;
  });
  return [
    SCOPE_TABLE_START,
    '<!-- prettier-ignore-start -->',
    '| SDK operation | HTTP | scope |',
    '| --- | --- | --- |',
    ...rows,
    '<!-- prettier-ignore-end -->',
    SCOPE_TABLE_END,
  ].join('\n');
}

/** `page` with its scope table replaced by the current one. */
export function withScopeTable(page: string): string {
  const start = page.indexOf(SCOPE_TABLE_START);
  const end = page.indexOf(SCOPE_TABLE_END);
  if (start < 0 || end < start) throw new Error('the page has no scope-table markers');
  return page.slice(0, start) + scopeTable() + page.slice(end + SCOPE_TABLE_END.length);
}
