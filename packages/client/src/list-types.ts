// The value types of list queries, used by the generated query types (generated/types.ts).
// `contract-types.test-d.ts` checks each against the contract's own.

/** One sort key: a sortable field, `-` in front for descending. */
export type SortKey<S extends string> = S | `-${S}`;

/**
 * What `sort` accepts: a sortable field or `-field`, or several comma-separated (the type checks
 * the first; the server checks every one and names a field it cannot sort by).
 */
export type SortInput<S extends string> = SortKey<S> | `${SortKey<S>},${string}`;

/** An equality filter on an enum: one value, or several comma-separated (IN). */
export type ListFilter<V extends string> = V | `${V},${string}`;

/** An equality filter on an integer field: a number, or several comma-separated. */
export type IntegerFilter = number | `${number}` | `${number},${string}`;

/** Range filters on fields: `created_at[gte]`, `created_at[gt]`, `created_at[lte]`, `created_at[lt]`. */
export type RangeFilters<F extends string, V> = {
  [K in `${F}[${'gte' | 'gt' | 'lte' | 'lt'}]`]?: V;
};
