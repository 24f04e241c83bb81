import type { SafeParseReturnType, ZodTypeAny } from 'zod';

type Parsed = SafeParseReturnType<unknown, unknown>;

/** Results parsed ahead, by the value parsed, each with its schema; taken by the next parse. */
const ahead = new WeakMap<object, { schema: ZodTypeAny; result: Parsed }>();
/** Each watched schema's own `safeParse`, which its replacement calls after looking in `ahead`. */
const ownParse = new WeakMap<ZodTypeAny, ZodTypeAny['safeParse']>();

/**
 * `schema.safeParse(value)`, kept for the next `safeParse` of the same object by the same schema:
 * that parse returns this result instead of parsing again. The request pipeline validates the
 * body of an operation that costs more than one unit to price it, and the handler then parses it
 * (common/api-handler.ts); a 1,000-item batch's body took ~5 ms to parse each time.
 *
 * Only an object is kept (a string or number parses in no time), only once, and only until the
 * object is garbage. The object must not change in between: the next parse would not see the
 * change. Nothing between the guard and the handler writes to a request's body (the interceptors read
 * it; the idempotency fingerprint copies it). A query is not worth keeping: Express builds
 * `req.query` anew on each read, so the next parse never meets the same object.
 */
export function parseAhead(schema: ZodTypeAny, value: unknown): Parsed {
  const result = watch(schema)(value);
  if (typeof value === 'object' && value !== null) ahead.set(value, { schema, result });
  return result;
}

/** Makes `schema.safeParse` look in `ahead` first; returns the parse that does not. */
function watch(schema: ZodTypeAny): ZodTypeAny['safeParse'] {
  const watched = ownParse.get(schema);
  if (watched) return watched;
  // Zod binds `safeParse` to each schema in its constructor; this replaces that own property
  // on this schema alone (its `parse` calls it too), so no schema built from it parses differently.
  const parse = schema.safeParse.bind(schema);
  ownParse.set(schema, parse);
  schema.safeParse = ((data: unknown, params?: Parameters<ZodTypeAny['safeParse']>[1]) => {
    if (typeof data === 'object' && data !== null) {
      const kept = ahead.get(data);
      if (kept) {
        ahead.delete(data);
        if (kept.schema === schema && params === undefined) return kept.result;
      }
    }
    return parse(data, params);
  }) as ZodTypeAny['safeParse'];
  return parse;
}
