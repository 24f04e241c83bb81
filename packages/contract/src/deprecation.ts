/**
 * Deprecation of an operation, a query parameter or a body field. The server answers a request
 * that uses a deprecated part with `Deprecation` (RFC 9745), `Sunset` (RFC 8594) once a date is
 * set, and `Link; rel="deprecation"`; the OpenAPI document marks it `deprecated` with an
 * `x-deprecation` extension; the SDKs warn once per operation when they see the header.
 */
import { type AppRoute, type AppRouter, isAppRoute } from '@ts-rest/core';
import type { ZodTypeAny } from 'zod';

export interface Deprecation {
  /** The day it was deprecated (YYYY-MM-DD, UTC): `Deprecation: @<that midnight in Unix seconds>`. */
  since: string;
  /** The day after which it may stop working (YYYY-MM-DD, UTC): `Sunset: <HTTP-date>`. */
  sunset?: string;
  /** The migration note; default the server's `/docs/deprecations` entry. */
  link?: string;
  /** What to use instead, in words (`students.list with status=withdrawn`). */
  replacement?: string;
}

/** The server's page listing every deprecated part, the `Link` target when the contract names none. */
export const DEPRECATIONS_PAGE_PATH = '/docs/deprecations';

/** The OpenAPI extension that carries a deprecation's dates and link, on operations, parameters and properties. */
export const DEPRECATION_EXTENSION = 'x-deprecation';

const DAY = /^\d{4}-\d{2}-\d{2}$/;

function checked(deprecation: Deprecation): Deprecation {
  for (const key of ['since', 'sunset'] as const) {
    const day = deprecation[key];
    if (day !== undefined && (!DAY.test(day) || Number.isNaN(Date.parse(`${day}T00:00:00Z`)))) {
      throw new Error(`deprecation ${key} must be a YYYY-MM-DD date, got ${day}`);
    }
  }
  if (deprecation.sunset !== undefined && deprecation.sunset <= deprecation.since) {
    throw new Error(`deprecation sunset ${deprecation.sunset} is not after ${deprecation.since}`);
  }
  return deprecation;
}

/** One sentence for descriptions: since, sunset, replacement and migration note. */
export function deprecationNote(deprecation: Deprecation): string {
  return [
    `Deprecated since ${deprecation.since}`,
    deprecation.sunset ? `; it stops working after ${deprecation.sunset} (Sunset)` : '',
    '.',
    deprecation.replacement ? ` Use ${deprecation.replacement} instead.` : '',
    deprecation.link ? ` Migration note: ${deprecation.link}` : '',
  ].join('');
}

/** The marks a zod schema carries; `.openapi()` (from @anatine/zod-openapi) stores them here. */
type WithOpenApi = ZodTypeAny & { metaOpenApi?: Record<string, unknown> };

/**
 * Marks a query parameter or body field deprecated: `old_name: deprecated(z.string().optional(),
 * { since: '2026-01-01' })`. Returns a copy (`.openapi()` changes the schema it is called on).
 */
export function deprecated<T extends ZodTypeAny>(schema: T, deprecation: Deprecation): T {
  const info = checked(deprecation);
  const description = [schema.description, deprecationNote(info)].filter(Boolean).join(' ');
  // `describe` makes a new instance, which carries none of the original's OpenAPI marks: copy them.
  const copy = schema.describe(description) as T & WithOpenApi;
  const marks = (schema as WithOpenApi).metaOpenApi;
  copy.metaOpenApi = {
    ...(marks && !Array.isArray(marks) && marks),
    description,
    deprecated: true,
    [DEPRECATION_EXTENSION]: info,
  };
  return copy;
}

/** Checks a route's `metadata.deprecated`, so a typo in a date fails at start, not in a header. */
export function operationDeprecation(deprecation: Deprecation): Deprecation {
  return checked(deprecation);
}

/** The wrappers a field's schema can sit in (optional, nullable, default, refine, brand, …). */
function inner(schema: ZodTypeAny): ZodTypeAny | undefined {
  const def = schema._def as { innerType?: ZodTypeAny; schema?: ZodTypeAny; type?: ZodTypeAny };
  const typeName = (def as { typeName?: string }).typeName;
  if (typeName === 'ZodArray') return undefined;
  return def.innerType ?? def.schema ?? (typeName === 'ZodBranded' ? def.type : undefined);
}

/** The deprecation marked on a schema or on any wrapper around it. */
export function deprecationOf(schema: unknown): Deprecation | undefined {
  for (let s = schema as ZodTypeAny | undefined; s && s._def; s = inner(s)) {
    const marks = (s as WithOpenApi).metaOpenApi;
    const found = marks && !Array.isArray(marks) ? marks[DEPRECATION_EXTENSION] : undefined;
    if (found) return found as Deprecation;
  }
  return undefined;
}

/** The object schema inside wrappers, or undefined when it is not an object. */
function objectShape(schema: unknown): Record<string, ZodTypeAny> | undefined {
  for (let s = schema as ZodTypeAny | undefined; s && s._def; s = inner(s)) {
    if ((s._def as { typeName?: string }).typeName === 'ZodObject') {
      return (s as unknown as { shape: Record<string, ZodTypeAny> }).shape;
    }
  }
  return undefined;
}

function arrayElement(schema: unknown): ZodTypeAny | undefined {
  for (let s = schema as ZodTypeAny | undefined; s && s._def; s = inner(s)) {
    const def = s._def as { typeName?: string; type?: ZodTypeAny };
    if (def.typeName === 'ZodArray') return def.type;
  }
  return undefined;
}

/** One deprecated part of an operation: the operation itself, a parameter or a field. */
export interface DeprecatedPart {
  /** `operation`, `query.<name>` or `body.<path>` (dots for nested fields, `[]` for list items). */
  part: string;
  deprecation: Deprecation;
}

/** The `/docs/deprecations` anchor of a part: `get-v1-things-id--query-old_name`. */
export function deprecationAnchor(route: { method: string; path: string }, part: string): string {
  const slug = (text: string) =>
    text
      .toLowerCase()
      .replace(/[^a-z0-9_]+/g, '-')
      .replace(/^-|-$/g, '');
  return part === 'operation'
    ? slug(`${route.method} ${route.path}`)
    : `${slug(`${route.method} ${route.path}`)}--${slug(part)}`;
}

function routeDeprecation(route: AppRoute): Deprecation | undefined {
  const metadata = route.metadata as { deprecated?: Deprecation } | undefined;
  return metadata?.deprecated;
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Deprecated fields present in `value` (a request body), walking nested objects and lists. */
function usedFields(schema: unknown, value: unknown, path: string, found: DeprecatedPart[]): void {
  if (Array.isArray(value)) {
    const element = arrayElement(schema);
    if (element) for (const item of value) usedFields(element, item, `${path}[]`, found);
    return;
  }
  const shape = objectShape(schema);
  if (!shape || !isPlainObject(value)) return;
  for (const [key, field] of Object.entries(shape)) {
    if (!(key in value)) continue;
    const deprecation = deprecationOf(field);
    const part = `${path}.${key}`;
    if (deprecation && !found.some((f) => f.part === part)) found.push({ part, deprecation });
    usedFields(field, value[key], part, found);
  }
}

/**
 * The deprecated parts a request uses: the operation, each deprecated query parameter it sends
 * (`created_at[gte]` counts as `created_at`), and each deprecated body field it sends.
 */
export function requestDeprecations(
  route: AppRoute,
  request: { query?: unknown; body?: unknown },
): DeprecatedPart[] {
  const found: DeprecatedPart[] = [];
  const operation = routeDeprecation(route);
  if (operation) found.push({ part: 'operation', deprecation: operation });
  const queryShape = objectShape(route.query);
  if (queryShape && isPlainObject(request.query)) {
    const sent = new Set(Object.keys(request.query).map((key) => key.replace(/\[.*$/, '')));
    for (const [name, schema] of Object.entries(queryShape)) {
      const deprecation = deprecationOf(schema);
      if (deprecation && sent.has(name)) found.push({ part: `query.${name}`, deprecation });
    }
  }
  if ('body' in route) usedFields(route.body, request.body, 'body', found);
  return found;
}

/** Every deprecated part a router declares, for the `/docs/deprecations` page. */
export function listDeprecations(
  router: AppRouter,
  prefix: string[] = [],
): (DeprecatedPart & { operationId: string; method: string; path: string })[] {
  const result: (DeprecatedPart & { operationId: string; method: string; path: string })[] = [];
  for (const [key, entry] of Object.entries(router)) {
    const name = [...prefix, key];
    if (!isAppRoute(entry)) {
      result.push(...listDeprecations(entry, name));
      continue;
    }
    const parts: DeprecatedPart[] = [];
    const operation = routeDeprecation(entry);
    if (operation) parts.push({ part: 'operation', deprecation: operation });
    for (const [param, schema] of Object.entries(objectShape(entry.query) ?? {})) {
      const deprecation = deprecationOf(schema);
      if (deprecation) parts.push({ part: `query.${param}`, deprecation });
    }
    if ('body' in entry) listFields(entry.body, 'body', parts);
    for (const part of parts) {
      result.push({ ...part, operationId: name.join('.'), method: entry.method, path: entry.path });
    }
  }
  return result;
}

function listFields(schema: unknown, path: string, found: DeprecatedPart[], depth = 0): void {
  // Schemas are trees in this contract; the bound only guards against a recursive one.
  if (depth > 8) return;
  const element = arrayElement(schema);
  if (element) return listFields(element, `${path}[]`, found, depth + 1);
  for (const [key, field] of Object.entries(objectShape(schema) ?? {})) {
    const deprecation = deprecationOf(field);
    if (deprecation) found.push({ part: `${path}.${key}`, deprecation });
    listFields(field, `${path}.${key}`, found, depth + 1);
  }
}
