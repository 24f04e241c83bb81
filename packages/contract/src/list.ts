/**
 * The list convention of every collection, defined once: `listQuery()` builds the query schema
 * and `listResponse()` the body schema. A collection declares only which fields it filters,
 * ranges over, sorts and searches; page size limits, strictness and messages cannot differ.
 */
import { dateTimeInput } from './date-time';
import { type ExternalIdKind, ID_PREFIXES, type IdKind, idPattern, referencePattern } from './ids';
import { cursorOf, LIST_CURSOR_MAX_LENGTH, type ListCursor } from './list-cursor';
import { z } from './zod-openapi';

export const LIST_DEFAULTS = { page: 1, perPage: 25, maxPerPage: 100, maxPage: 1_000_000 } as const;

/**
 * `q` length in characters (code points). From `indexed` on, a search is served by trigram
 * indexes; those cannot narrow down 1–2 characters, so a shorter q scans the organization's rows
 * within the same time budget (two-letter surnames such as Li or Xu must stay searchable).
 */
export const SEARCH_LENGTH = { min: 1, indexed: 3, max: 200 } as const;

export const RANGE_OPERATORS = ['gte', 'gt', 'lte', 'lt'] as const;
export type RangeOperator = (typeof RANGE_OPERATORS)[number];

/** How an equality filter's comma-separated values are read. */
export type FilterSpec =
  | {
      kind: 'enum';
      values: readonly [string, ...string[]];
      /** What the values mean, when they are not a column's own (a state derived from several). */
      description?: string;
    }
  // `external`: also `ext:<external_id>` of the record (`filter.reference`).
  | { kind: 'id'; pattern: RegExp; prefix: string; external?: true }
  | { kind: 'integer'; min: number; max: number }
  | { kind: 'string'; maxLength: number };

export const filter = {
  oneOf: <const T extends readonly [string, ...string[]]>(values: T, description?: string) =>
    ({ kind: 'enum', values, ...(description !== undefined && { description }) }) as const,
  integer: (min: number, max: number) => ({ kind: 'integer', min, max }) as const,
  /** Ids of another resource, e.g. `student_id=stu_…,stu_…`; generic so the type keeps the one prefix. */
  id: <K extends IdKind>(kind: K) =>
    ({ kind: 'id', pattern: idPattern(kind), prefix: ID_PREFIXES[kind] }) as const,
  /** Ids of a resource with external ids, or `ext:<external_id>`: `student_id=ext:SIS-0042`. */
  reference: <K extends ExternalIdKind>(kind: K) =>
    ({
      kind: 'id',
      pattern: referencePattern(kind),
      prefix: ID_PREFIXES[kind],
      external: true,
    }) as const,
  string: (maxLength = 200) => ({ kind: 'string', maxLength }) as const,
};

/** What a range filter compares: instants, calendar dates or integers. */
export type RangeKind = 'datetime' | 'date' | 'integer';

export interface ListSpec<
  F extends Record<string, FilterSpec>,
  R extends Record<string, RangeKind>,
  S extends string,
> {
  /** `<field>=a,b`: equality, or IN when several values are given. */
  filters: F;
  /** `<field>[gte|gt|lte|lt]=v`. `created_at` and `updated_at` are always available. */
  ranges?: R;
  /** Fields `sort` accepts besides `created_at` and `updated_at`. */
  sort?: readonly S[];
  /** Fields that `q` searches; omit to have no `q` parameter. */
  search?: readonly string[];
  /**
   * The collection's list totals are tallied (exact and read from a counter, not counted): the
   * equality filters tallied per value, `[]` for the whole collection only. Omit to count. The
   * server's migration helper (apps/server/src/database/collection-indexes.ts) builds the tallies
   * and the search index from this declaration.
   */
  tally?: readonly (keyof F & string)[];
}

export type SortDirection = 'asc' | 'desc';

/** One normalized condition; the server turns each into one SQL predicate. */
export type ListCondition =
  | { field: string; op: 'in'; values: (string | number)[] }
  | { field: string; op: RangeOperator; value: Date | string | number };

/** The validated, normalized form of any list query, as the server receives it. */
export interface ListQuery<SortField extends string = string> {
  page: number;
  per_page: number;
  /** Requested order; ties are broken by `id` in the direction of the last key. */
  sort: { field: SortField; direction: SortDirection }[];
  conditions: ListCondition[];
  q?: string;
  /**
   * A `cursor`: the page starts after this row of the order (keyset), and `page` is the page
   * number the cursor opens. Its tag is the server's to check.
   */
  after?: ListCursor;
}

const DEFAULT_RANGES = { created_at: 'datetime', updated_at: 'datetime' } as const;
type DefaultSortField = 'created_at' | 'updated_at';

// --- individual parameter schemas -------------------------------------------------------

/** An integer in a query string: digits only, so `1.5`, `1e2`, `0x10` and ` 7` are refused. */
export function integerParam(name: string, min: number, max: number) {
  const message = `${name} must be an integer between ${min} and ${max}`;
  return z.preprocess(
    (value) => (typeof value === 'string' && /^-?\d{1,16}$/.test(value) ? Number(value) : value),
    z
      .number({ invalid_type_error: message, required_error: message })
      .int(message)
      .min(min, message)
      .max(max, message),
  ) as unknown as z.ZodType<number, z.ZodTypeDef, number>;
}

function instantParam(name: string) {
  return dateTimeInput(name).transform((value) => new Date(value));
}

function dateParam(name: string) {
  return z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}$/, `${name} must be a date in YYYY-MM-DD form`)
    .refine(
      (value) =>
        !Number.isNaN(Date.parse(`${value}T00:00:00Z`)) &&
        new Date(`${value}T00:00:00Z`).toISOString().startsWith(value),
      {
        message: `${name} must be a real calendar date`,
      },
    );
}

function rangeParam(name: string, kind: RangeKind) {
  switch (kind) {
    case 'datetime':
      return instantParam(name);
    case 'date':
      return dateParam(name);
    case 'integer':
      return integerParam(name, Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER);
  }
}

export function filterParam(name: string, spec: FilterSpec) {
  return z
    .string()
    .max(2000, `${name} is too long`)
    .transform((raw, ctx) => {
      const parts = raw.split(',').map((part) => part.trim());
      if (parts.some((part) => part === '')) {
        ctx.addIssue({
          code: z.ZodIssueCode.custom,
          message: `${name} must not contain empty values`,
        });
        return z.NEVER;
      }
      const values: (string | number)[] = [];
      for (const part of parts) {
        switch (spec.kind) {
          case 'enum':
            if (!spec.values.includes(part)) {
              ctx.addIssue({
                code: z.ZodIssueCode.custom,
                message: `${name} must be one or more of ${spec.values.join(', ')} (got '${part}')`,
              });
              return z.NEVER;
            }
            values.push(part);
            break;
          case 'integer': {
            const n = /^-?\d{1,16}$/.test(part) ? Number(part) : NaN;
            if (!Number.isSafeInteger(n) || n < spec.min || n > spec.max) {
              ctx.addIssue({
                code: z.ZodIssueCode.custom,
                message: `${name} must be one or more integers between ${spec.min} and ${spec.max} (got '${part}')`,
              });
              return z.NEVER;
            }
            values.push(n);
            break;
          }
          case 'id':
            if (!spec.pattern.test(part)) {
              ctx.addIssue({
                code: z.ZodIssueCode.custom,
                message: `${name} must be one or more ${spec.prefix}_… ids${spec.external ? ' or ext:<external_id>' : ''} (got '${part.slice(0, 40)}')`,
              });
              return z.NEVER;
            }
            values.push(part);
            break;
          case 'string':
            if (part.length > spec.maxLength) {
              ctx.addIssue({
                code: z.ZodIssueCode.custom,
                message: `${name} values must be at most ${spec.maxLength} characters`,
              });
              return z.NEVER;
            }
            values.push(part);
            break;
        }
      }
      return [...new Set(values)];
    })
    .openapi({
      description:
        spec.kind === 'enum'
          ? spec.description
            ? `${spec.description} Comma-separate several values for any of them. One of: ${spec.values.join(', ')}.`
            : `Equality filter; comma-separate several values for IN. One of: ${spec.values.join(', ')}.`
          : spec.kind === 'id' && spec.external
            ? 'Equality filter; comma-separate several values for IN. An id, or `ext:<external_id>`.'
            : 'Equality filter; comma-separate several values for IN.',
      // What the comma-separated values are, for generated SDKs to type the filter with (the
      // schema itself is a string): enum values, the prefix of the ids, or integers.
      ...(spec.kind === 'enum' && { 'x-enum-values': [...spec.values] }),
      ...(spec.kind === 'id' && { 'x-id-prefix': spec.prefix }),
      ...(spec.kind === 'id' && spec.external && { 'x-external-ids': true }),
      ...(spec.kind === 'integer' && { 'x-integer-values': true }),
    });
}

function sortParam(fields: readonly string[]) {
  const allowed = new Set(fields);
  return z
    .string()
    .transform((raw, ctx) => {
      const keys: { field: string; direction: SortDirection }[] = [];
      const seen = new Set<string>();
      for (const token of raw.split(',')) {
        const direction: SortDirection = token.startsWith('-') ? 'desc' : 'asc';
        const field = token.replace(/^-/, '');
        if (!allowed.has(field)) {
          ctx.addIssue({
            code: z.ZodIssueCode.custom,
            message: `sort field '${field}' is not sortable; use ${[...allowed].join(', ')} (prefix - for descending)`,
          });
          return z.NEVER;
        }
        if (seen.has(field)) {
          ctx.addIssue({ code: z.ZodIssueCode.custom, message: `sort names '${field}' twice` });
          return z.NEVER;
        }
        seen.add(field);
        keys.push({ field, direction });
      }
      return keys;
    })
    .openapi({
      description: `Comma-separated fields, \`-\` prefix for descending. Default \`-created_at\`. Sortable: ${fields.join(', ')}. Ties are broken by id.`,
      example: '-created_at',
      'x-sortable': [...fields],
    });
}

// --- the builders ------------------------------------------------------------------------

type RangeInput<K extends RangeKind> = K extends 'integer' ? number : string;

/** What callers may pass for a filter: enum values (one, or comma-separated), integers, strings. */
export type FilterInput<S> = S extends { kind: 'enum'; values: readonly (infer V extends string)[] }
  ? V | `${V},${string}`
  : S extends { kind: 'id'; prefix: infer P extends string; external: true }
    ? `${P}_${string}` | `ext:${string}`
    : S extends { kind: 'id'; prefix: infer P extends string }
      ? `${P}_${string}`
      : S extends { kind: 'integer' }
        ? number | `${number}` | `${number},${string}`
        : string;

type FilterShape<F> = {
  [K in keyof F & string]: z.ZodOptional<z.ZodType<unknown, z.ZodTypeDef, FilterInput<F[K]>>>;
};
type RangeShape<R> = {
  [K in keyof R & string as `${K}[${RangeOperator}]`]: z.ZodOptional<
    z.ZodType<unknown, z.ZodTypeDef, R[K] extends RangeKind ? RangeInput<R[K]> : never>
  >;
};
/** One sort key: a sortable field, `-` in front for descending. */
export type SortKey<S extends string> = S | `-${S}`;
/**
 * What `sort` accepts: a sortable field or `-field`, or several comma-separated (the type
 * checks the first, as with enum filters; the server checks every one).
 */
export type SortInput<S extends string> = SortKey<S> | `${SortKey<S>},${string}`;

type BaseShape<S extends string> = {
  page: z.ZodOptional<z.ZodType<number, z.ZodTypeDef, number>>;
  cursor: z.ZodOptional<z.ZodType<string, z.ZodTypeDef, string>>;
  per_page: z.ZodOptional<z.ZodType<number, z.ZodTypeDef, number>>;
  sort: z.ZodOptional<z.ZodType<unknown, z.ZodTypeDef, SortInput<S>>>;
  updated_since: z.ZodOptional<z.ZodType<unknown, z.ZodTypeDef, string>>;
  q: z.ZodOptional<z.ZodType<string, z.ZodTypeDef, string>>;
};

export type ListQueryShape<F, R, S extends string = string> = BaseShape<S | DefaultSortField> &
  FilterShape<F> &
  RangeShape<R & typeof DEFAULT_RANGES>;

export type ListQuerySchema<F, R, S extends string> = z.ZodEffects<
  z.ZodObject<ListQueryShape<F, R, S>, 'strict'>,
  ListQuery<S | DefaultSortField>
>;

/** A list spec as `listQuery` completed it: its ranges and sort fields with the defaults. */
type CompletedListSpec = ListSpec<Record<string, FilterSpec>, Record<string, RangeKind>, string> &
  Required<Pick<ListSpec<never, Record<string, RangeKind>, string>, 'ranges' | 'sort'>>;

/** The spec each list query schema was built from (see `listSpecOf`). */
const specs = new WeakMap<object, CompletedListSpec>();

/**
 * The spec a list query schema was built from, with `created_at` and `updated_at` among its
 * ranges and sort fields as the query accepts them: for a server to derive its columns from.
 */
export function listSpecOf(schema: object): CompletedListSpec | undefined {
  return specs.get(schema);
}

/**
 * The sentence that tells a list's readers what its query narrows by: its filters, its ranges
 * (its own, then `created_at` and `updated_at`) and what `q` searches, e.g. "Filters: `status`;
 * ranges on `held_on`, `created_at`, `updated_at`; `q` searches `title`." Undefined for a list
 * that declares nothing of its own (only the ranges every list has).
 */
export function describeListQuery(schema: object): string | undefined {
  const spec = listSpecOf(schema);
  if (!spec) throw new Error('not a list query schema (build it with listQuery)');
  const code = (names: readonly string[]) => names.map((name) => `\`${name}\``).join(', ');
  const filters = Object.keys(spec.filters);
  // Its own ranges first, then the ones every list has.
  const ranges = Object.keys(spec.ranges).sort(
    (a, b) => Number(a in DEFAULT_RANGES) - Number(b in DEFAULT_RANGES),
  );
  const search = spec.search ?? [];
  if (!filters.length && ranges.length === Object.keys(DEFAULT_RANGES).length && !search.length)
    return undefined;
  const parts = [
    ...(filters.length ? [`Filters: ${code(filters)}`] : []),
    `${filters.length ? 'ranges' : 'Ranges'} on ${code(ranges)}`,
    ...(search.length ? [`\`q\` searches ${code(search)}`] : []),
  ];
  return `${parts.join('; ')}.`;
}

export function listQuery<
  const F extends Record<string, FilterSpec>,
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- what `ranges: {}` infers
  const R extends Record<string, RangeKind> = {},
  const S extends string = never,
>(spec: ListSpec<F, R, S>): ListQuerySchema<F, R, S> {
  const ranges: Record<string, RangeKind> = { ...DEFAULT_RANGES, ...spec.ranges };
  const sortable = [...new Set<string>([...(spec.sort ?? []), 'created_at', 'updated_at'])];
  const shape: Record<string, z.ZodTypeAny> = baseParams(sortable);
  if (spec.search?.length) {
    shape.q = z
      .string()
      .min(SEARCH_LENGTH.min, 'q must not be empty')
      .max(SEARCH_LENGTH.max, `q must be at most ${SEARCH_LENGTH.max} characters`)
      .optional()
      .openapi({
        description: `Case-insensitive substring search over ${spec.search.join(', ')}. From ${SEARCH_LENGTH.indexed} characters on it is served by an index; a 1–${SEARCH_LENGTH.indexed - 1} character q reads the organization's records. A search that cannot finish within the server's time budget is a 503: use a longer q or add filters.`,
      });
  }
  for (const [name, filterSpec] of Object.entries(spec.filters)) {
    shape[name] = filterParam(name, filterSpec).optional();
  }
  for (const [field, kind] of Object.entries(ranges)) {
    for (const op of RANGE_OPERATORS) {
      const name = `${field}[${op}]`;
      shape[name] = (rangeParam(name, kind) as z.ZodTypeAny)
        .optional()
        .openapi({ description: `Range filter: ${field} ${op} the value.` });
    }
  }

  const filterNames = Object.keys(spec.filters);
  const rangeNames = Object.keys(ranges);

  const schema = z
    .object(shape)
    .strict()
    .transform((raw: Record<string, unknown>, ctx): ListQuery<S | DefaultSortField> => {
      const conditions = conditionsOf(raw, filterNames, rangeNames);
      const sort = (raw.sort as ListQuery<S | DefaultSortField>['sort'] | undefined) ?? [
        { field: 'created_at', direction: 'desc' },
      ];
      const after = raw.cursor === undefined ? undefined : cursorOf(raw, sort, ctx);
      if (after === null) return z.NEVER;
      return {
        page: after?.page ?? (raw.page as number | undefined) ?? LIST_DEFAULTS.page,
        per_page: (raw.per_page as number | undefined) ?? LIST_DEFAULTS.perPage,
        sort,
        conditions,
        ...(raw.q !== undefined && { q: raw.q as string }),
        ...(after && { after }),
      };
    }) as unknown as ListQuerySchema<F, R, S>;
  specs.set(schema, { ...spec, ranges, sort: sortable });
  return schema;
}

/** The parameters every list takes: page, cursor, per_page, sort and updated_since. */
function baseParams(sortable: readonly string[]): Record<string, z.ZodTypeAny> {
  return {
    page: integerParam('page', 1, LIST_DEFAULTS.maxPage).optional().openapi({
      description:
        '1-based page number. For walking a whole list, follow `links.next` (a `cursor`) instead: it costs the same on the last page as on the first.',
      default: LIST_DEFAULTS.page,
    }),
    cursor: z
      .string()
      .max(
        LIST_CURSOR_MAX_LENGTH,
        'cursor is not a list cursor: pass the cursor from links.next as it is',
      )
      .optional()
      .openapi({
        description:
          'Where the previous page ended, from `links.next` (opaque; not with `page`). The next page starts after that record in the same `sort`, so records added or removed meanwhile never make a walk skip or repeat one. Keep the other parameters; `per_page` and filters may change, `sort` may not.',
      }),
    per_page: integerParam('per_page', 1, LIST_DEFAULTS.maxPerPage)
      .optional()
      .openapi({
        description: `Items per page, at most ${LIST_DEFAULTS.maxPerPage}.`,
        default: LIST_DEFAULTS.perPage,
      }),
    sort: sortParam(sortable).optional(),
    updated_since: instantParam('updated_since').optional().openapi({
      description: 'Only records changed at or after this instant (incremental sync).',
    }),
  };
}

/** A parsed query's filters, ranges and updated_since as the conditions the server runs. */
function conditionsOf(
  raw: Record<string, unknown>,
  filterNames: readonly string[],
  rangeNames: readonly string[],
): ListCondition[] {
  const conditions: ListCondition[] = [];
  for (const field of filterNames) {
    const values = raw[field] as (string | number)[] | undefined;
    if (values) conditions.push({ field, op: 'in', values });
  }
  for (const field of rangeNames) {
    for (const op of RANGE_OPERATORS) {
      const value = raw[`${field}[${op}]`] as Date | string | number | undefined;
      if (value !== undefined) conditions.push({ field, op, value });
    }
  }
  if (raw.updated_since) {
    conditions.push({ field: 'updated_at', op: 'gte', value: raw.updated_since as Date });
  }
  return conditions;
}

export const PageMetaSchema = z
  .object({
    page: z.number().int(),
    per_page: z.number().int(),
    total: z.number().int().openapi({
      description:
        'Records matching the query. Exact when `total_exact` is true, which it always is for the students, courses, enrollments, payments, exams and exam results lists without `q`, unfiltered or filtered only by `status`. Otherwise a lower bound: the server counts at most 10,000 records (by default) past the requested page, so more exist than `total` says.',
    }),
    total_pages: z.number().int().openapi({
      description:
        'ceil(total / per_page). While more records exist it is greater than `page`, so paging until `page >= total_pages` (or until `links.next` is null) visits every record.',
    }),
    total_exact: z.boolean().openapi({
      description:
        'Whether `total` and `total_pages` are exact. Always true for the students, courses, enrollments, payments, exams and exam results lists without `q`, unfiltered or filtered only by `status`; otherwise false when the matches continue more than 10,000 records (by default) past the requested page.',
    }),
  })
  .openapi({ title: 'PageMeta' });

export const PageLinksSchema = z
  .object({
    self: z.string().url(),
    first: z.string().url(),
    prev: z.string().url().nullable(),
    next: z.string().url().nullable(),
    last: z.string().url(),
  })
  .openapi({ title: 'PageLinks' });

export type PageMeta = z.infer<typeof PageMetaSchema>;
export type PageLinks = z.infer<typeof PageLinksSchema>;

export function listResponse<T extends z.ZodTypeAny>(item: T, title: string) {
  return z
    .object({ data: z.array(item), meta: PageMetaSchema, links: PageLinksSchema })
    .openapi({ title });
}
