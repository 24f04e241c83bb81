import { RESOURCE_NAMES, RESOURCES } from '@platform/contract';
import { z } from 'zod';

/**
 * A valid create body for a resource, made from its contract schema: every required field gets a
 * value its schema accepts (text made unique by `n`), and every reference `<singular>_id`, optional
 * or not, the id of the record made for that resource in `refs`; other optional fields are left out. The contract walk's
 * fixtures for the registry's resources come from here, so a new resource needs none written by
 * hand. Fails naming the field when it cannot make a value, rather than sending a bad body.
 */
export function exampleBody(
  schema: z.AnyZodObject,
  refs: Readonly<Record<string, string>>,
  n: number,
): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const [field, fieldSchema] of Object.entries(schema.shape as z.ZodRawShape)) {
    // Every reference is filled, optional ones too: the walk checks each one's isolation.
    const optional = fieldSchema.isOptional() || fieldSchema instanceof z.ZodDefault;
    if (optional && !isReference(field)) continue;
    body[field] = exampleValue(field, fieldSchema, refs, n);
  }
  const parsed = schema.safeParse(body);
  if (!parsed.success)
    throw new Error(`exampleBody made ${JSON.stringify(body)}: ${parsed.error.message}`);
  return body;
}

/** `<singular>_id` names one of our records; `external_id` is the caller's own key. */
export const isReference = (field: string): boolean =>
  field.endsWith('_id') && field !== 'external_id';

function exampleValue(
  field: string,
  schema: z.ZodTypeAny,
  refs: Readonly<Record<string, string>>,
  n: number,
): unknown {
  const reference = isReference(field) ? /^(\w+)_id$/.exec(field)?.[1] : undefined;
  if (reference) {
    const name = RESOURCE_NAMES.find((r) => RESOURCES[r].singular === reference);
    const id = name && refs[name];
    if (!id) throw new Error(`exampleBody: no ${reference} made before this body's ${field}`);
    return id;
  }
  // The example the contract gives for the OpenAPI document (`.openapi({ example })`).
  const declared = (schema as { metaOpenApi?: { example?: unknown } }).metaOpenApi?.example;
  if (declared !== undefined) return declared;
  if (schema instanceof z.ZodNullable || schema instanceof z.ZodEffects)
    return exampleValue(field, innerOf(schema), refs, n);
  if (schema instanceof z.ZodEnum) return (schema.options as unknown[])[0];
  if (schema instanceof z.ZodLiteral) return schema.value as unknown;
  if (schema instanceof z.ZodBoolean) return true;
  if (schema instanceof z.ZodNumber) return Math.max(1, schema.minValue ?? 1);
  if (schema instanceof z.ZodString) {
    if (schema.isEmail) return `walk${n}@example.test`;
    if (schema.isDate) return '2026-01-15';
    if (schema.isDatetime) return '2026-01-15T09:00:00.000Z';
    return `Walk ${n}`.slice(0, schema.maxLength ?? undefined);
  }
  throw new Error(`exampleBody: cannot make a value for ${field} (${schema.constructor.name})`);
}

function innerOf(schema: z.ZodNullable<z.ZodTypeAny> | z.ZodEffects<z.ZodTypeAny>): z.ZodTypeAny {
  return schema instanceof z.ZodNullable ? schema.unwrap() : schema.innerType();
}

/** A body that changes a record through its update route: its first writable field, set anew. */
export function exampleChange(schema: z.AnyZodObject, n: number): Record<string, unknown> {
  for (const [field, fieldSchema] of Object.entries(schema.shape as z.ZodRawShape)) {
    if (/_id$/.test(field)) continue;
    const required = fieldSchema instanceof z.ZodOptional ? fieldSchema.unwrap() : fieldSchema;
    const body = { [field]: exampleValue(field, required as z.ZodTypeAny, {}, n) };
    if (schema.safeParse(body).success) return body;
  }
  throw new Error(`exampleChange: no field of ${Object.keys(schema.shape).join(', ')} to change`);
}
