import type { DataSource, EntityMetadata } from 'typeorm';
import type { z } from 'zod';
import { storedAsIs } from '../database/dialect';
import { toIso } from './timestamp';

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
  const fields = Object.keys(shape);
  // The property of each field, or null for `object`, where the literal goes.
  const read = fields.map((f) => properties.get(f) ?? null);
  // A batch's records share one `Date` per field (updated now): each field formats it once.
  const lastDate: unknown[] = fields.map(() => undefined);
  const lastText: string[] = fields.map(() => '');
  return (record) => {
    const resource: Record<string, unknown> = {};
    for (let i = 0; i < fields.length; i++) {
      const property = read[i]!;
      const value = property === null ? object : (record as Record<string, unknown>)[property];
      if (!(value instanceof Date)) resource[fields[i]!] = value;
      else if (value === lastDate[i]) resource[fields[i]!] = lastText[i];
      else {
        lastText[i] = toIso(value);
        lastDate[i] = value;
        resource[fields[i]!] = lastText[i];
      }
    }
    return resource as R;
  };
}

/** TypeORM's SQLite text form of a timestamp (UTC, milliseconds). */
const SQLITE_TIMESTAMP = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}$/;

/**
 * A raw row (the driver's, keyed by column name) straight to its API view: the same as
 * `resourceMapper` over the entity TypeORM would hydrate, without building the entity. Text and
 * integer columns as they are, timestamps as RFC 3339 with milliseconds (SQLite's text form
 * rewritten, PostgreSQL's `Date` formatted), anything else through the driver's own conversion.
 * Built once per resource; per row it only reads and converts, as a list page or an export of a
 * million rows needs.
 */
export function rowMapper<R = Record<string, unknown>>(
  metadata: EntityMetadata,
  driver: DataSource['driver'],
  schema: z.AnyZodObject,
): (row: Record<string, unknown>) => R {
  const shape = shapeOf(schema);
  const object = (shape.object as z.ZodLiteral<string> | undefined)?.value;
  const properties = new Map(fieldProperties(metadata, schema));
  const fields = Object.keys(shape).map((field) => {
    const property = properties.get(field);
    if (property === undefined) return { field, column: '', convert: () => object };
    const column = metadata.findColumnWithPropertyName(property)!;
    let convert: (raw: unknown) => unknown;
    if (column.type === Date) {
      convert = (raw) => {
        if (raw === null || raw === undefined) return null;
        if (raw instanceof Date) return toIso(raw);
        if (typeof raw === 'string' && SQLITE_TIMESTAMP.test(raw))
          return `${raw.slice(0, 10)}T${raw.slice(11)}Z`;
        return toIso(driver.prepareHydratedValue(raw, column) as Date);
      };
    } else if (storedAsIs(column)) {
      convert = (raw) => raw ?? null;
    } else {
      convert = (raw) => {
        const value: unknown = driver.prepareHydratedValue(raw, column);
        return value instanceof Date ? toIso(value) : (value ?? null);
      };
    }
    return { field, column: column.databaseName, convert };
  });
  return (row) => {
    const resource: Record<string, unknown> = {};
    for (const { field, column, convert } of fields) resource[field] = convert(row[column]);
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
