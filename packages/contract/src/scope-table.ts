import { type AppRoute, type AppRouter, isAppRoute } from '@ts-rest/core';
import { contract } from './contract';
import { DEFAULT_OPERATION_COST, operationCost, operationMetadata } from './operation';

export const SCOPE_TABLE_START =
  '<!-- scope-table:start (generated: pnpm --filter @platform/contract scope-table) -->';
export const SCOPE_TABLE_END = '<!-- scope-table:end -->';
export const COST_TABLE_START =
  '<!-- cost-table:start (generated: pnpm --filter @platform/contract scope-table) -->';
export const COST_TABLE_END = '<!-- cost-table:end -->';

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
    const metadata = operationMetadata(route);
    const none = metadata?.requiresUser
      ? 'any token acting for a member (any scope)'
      : metadata?.sandbox
        ? "a sandbox's token, with the write scope of what it changes"
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

/**
 * The rate-limit section's table of the operations that cost more than one unit (the rest cost
 * one), from the contract's `cost`.
 */
export function costTable(): string {
  const rows = routesOf(contract as unknown as AppRouter).flatMap(({ operation, route }) => {
    const metadata = operationMetadata(route);
    const cost = metadata ? operationCost(metadata) : DEFAULT_OPERATION_COST;
    return cost === DEFAULT_OPERATION_COST
      ? []
      : [`| \`${operation}\` | \`${route.method} ${route.path}\` | ${cost} |`];
  });
  return [
    COST_TABLE_START,
    '<!-- prettier-ignore-start -->',
    '| SDK operation | HTTP | units |',
    '| --- | --- | --- |',
    ...rows,
    `| every other operation | | ${DEFAULT_OPERATION_COST} |`,
    '<!-- prettier-ignore-end -->',
    COST_TABLE_END,
  ].join('\n');
}

function replaceBetween(page: string, start: string, end: string, table: string): string {
  const from = page.indexOf(start);
  const to = page.indexOf(end);
  if (from < 0 || to < from) throw new Error(`the page has no ${start} … ${end} markers`);
  return page.slice(0, from) + table + page.slice(to + end.length);
}

/** `page` with its scope table and its cost table replaced by the current ones. */
export function withScopeTable(page: string): string {
  const scoped = replaceBetween(page, SCOPE_TABLE_START, SCOPE_TABLE_END, scopeTable());
  return replaceBetween(scoped, COST_TABLE_START, COST_TABLE_END, costTable());
}
