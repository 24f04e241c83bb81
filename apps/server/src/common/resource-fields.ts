import type { EntityMetadata } from 'typeorm';
import type { z } from 'zod';

/**
 * A resource's fields, derived rather than restated: every field of a contract schema (other than
 * `object`) is the entity column of the same name (API fields are the database's snake_case
 * names), read or written through the column's property. A field without such a column throws
 * when the owning service is built, so a contract change cannot silently miss the entity.
 */
export function fieldProperties(
  metadata: EntityMetadata,
  schema: z.AnyZodObject,
): readonly (readonly [field: string, property: string])[] {
  return Object.keys(shapeOf(schema))
    .filter((field) => field !== 'object')
    .map((field) => [field, propertyOf(metadata, field)] as const);
}

function shapeOf(schema: z.AnyZodObject): Record<string, z.ZodTypeAny> {
  return schema.shape as Record<string, z.ZodTypeAny>;
}

/** The entity property whose column is named `field`; throws where there is none. */
export function propertyOf(metadata: EntityMetadata, field: string): string {
  const column = metadata.columns.find((c) => c.databaseName === field);
  if (!column) throw new Error(`${metadata.name} has no column for field '${field}'`);
  return column.propertyName;
}

/**
 * The API view of a record: `object` from the schema's literal, then each field from its column,
 * timestamps (entity `Date`s) as RFC 3339 with milliseconds, in the schema's field order.
 */
export function resourceMapper<T, R>(
  metadata: EntityMetadata,
  schema: z.AnyZodObject,
): (record: T) => R {
  const shape = shapeOf(schema);
  const object = (shape.object as z.ZodLiteral<string> | undefined)?.value;
  const properties = new Map(fieldProperties(metadata, schema));
  // [field, property], or [`object`, null] where the literal goes.
  const fields = Object.keys(shape).map((f) => [f, properties.get(f) ?? null] as const);
  return (record) => {
    const resource: Record<string, unknown> = {};
    for (const [field, property] of fields) {
      const value = property === null ? object : (record as Record<string, unknown>)[property];
      resource[field] = value instanceof Date ? value.toISOString() : value;
    }
    return resource as R;
  };
}

/**
 * A request body's fields under their entity property names: those present (an update's patch),
 * or with `absentAs` every field of the schema, an absent optional one as that value (a create).
 */
export function bodyColumns<T>(
  fields: ReturnType<typeof fieldProperties>,
  body: object,
  absentAs?: null,
): Partial<T> {
  const out: Record<string, unknown> = {};
  for (const [field, property] of fields) {
    const value = (body as Record<string, unknown>)[field];
    if (value !== undefined) out[property] = value;
    else if (absentAs === null) out[property] = null;
  }
  return out as Partial<T>;
}
