/**
 * The mirror's tables, derived from the contract: one table per exported collection, named as
 * the collection, with one column per field of the resource's schema (the schema of its
 * `<singular>.created` event, which is the resource as the API returns it). Nothing here names a
 * field: a field added to a resource's schema becomes a column of its table.
 */
import {
  EVENT_CATALOG,
  EXPORT_COLLECTIONS,
  RESOURCES,
  type ExportCollection,
} from '@platform/contract';
import type { z } from 'zod';

/** How a field is stored: strings (ids, enums, dates and timestamps kept exactly as the API writes them), numbers, booleans, or JSON for anything nested. */
export type ColumnKind = 'text' | 'integer' | 'real' | 'boolean' | 'json';

export interface ColumnSpec {
  readonly name: string;
  readonly kind: ColumnKind;
}

export interface TableSpec {
  /** The collection and the table: `students`. */
  readonly name: string;
  /** Its records' kind, the prefix of its event types: `student`. */
  readonly singular: string;
  /** `id` first, then the schema's fields in its order. */
  readonly columns: readonly ColumnSpec[];
}

/** What a zod schema is, by its type name (not `instanceof`: the contract may bring its own zod). */
function typeName(schema: z.ZodTypeAny): string {
  return (schema._def as { typeName?: string }).typeName ?? '';
}

/** The schema inside wrappers that do not change what is stored (nullable, optional, defaults, refinements). */
function unwrap(schema: z.ZodTypeAny): z.ZodTypeAny {
  let current = schema;
  for (;;) {
    const def = current._def as Record<string, unknown>;
    switch (typeName(current)) {
      case 'ZodNullable':
      case 'ZodOptional':
      case 'ZodDefault':
      case 'ZodCatch':
      case 'ZodReadonly':
        current = def.innerType as z.ZodTypeAny;
        break;
      case 'ZodEffects':
        current = def.schema as z.ZodTypeAny;
        break;
      case 'ZodBranded':
        current = def.type as z.ZodTypeAny;
        break;
      case 'ZodLazy':
        current = (def.getter as () => z.ZodTypeAny)();
        break;
      case 'ZodPipeline':
        current = def.out as z.ZodTypeAny;
        break;
      default:
        return current;
    }
  }
}

/** The column kind of one field's schema. */
export function columnKind(schema: z.ZodTypeAny): ColumnKind {
  const inner = unwrap(schema);
  switch (typeName(inner)) {
    case 'ZodString':
    case 'ZodEnum':
    case 'ZodNativeEnum':
      return 'text';
    case 'ZodNumber':
      return (inner as z.ZodNumber).isInt ? 'integer' : 'real';
    case 'ZodBigInt':
      return 'integer';
    case 'ZodBoolean':
      return 'boolean';
    case 'ZodLiteral': {
      const value: unknown = (inner._def as { value: unknown }).value;
      if (typeof value === 'string') return 'text';
      if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'real';
      if (typeof value === 'boolean') return 'boolean';
      return 'json';
    }
    default:
      return 'json';
  }
}

/** The table of a collection whose records `schema` describes. */
export function deriveTable(name: string, singular: string, schema: z.ZodTypeAny): TableSpec {
  const inner = unwrap(schema);
  if (typeName(inner) !== 'ZodObject')
    throw new Error(`The schema of ${name} is not an object; it cannot be a table`);
  const shape = (inner as z.AnyZodObject).shape as Record<string, z.ZodTypeAny>;
  if (!('id' in shape)) throw new Error(`The schema of ${name} has no id`);
  const columns: ColumnSpec[] = [{ name: 'id', kind: 'text' }];
  for (const [field, fieldSchema] of Object.entries(shape)) {
    if (field !== 'id') columns.push({ name: field, kind: columnKind(fieldSchema) });
  }
  return { name, singular, columns };
}

/** The collections the mirror can copy: the contract's exported resources. */
export const MIRRORED_COLLECTIONS: readonly ExportCollection[] = EXPORT_COLLECTIONS;

/** The table of an exported collection, from the contract. */
export function collectionTable(collection: ExportCollection): TableSpec {
  const { singular } = RESOURCES[collection];
  const schema = (EVENT_CATALOG as Record<string, z.ZodTypeAny>)[`${singular}.created`];
  if (schema === undefined) throw new Error(`The contract has no ${singular}.created event`);
  return deriveTable(collection, singular, schema);
}

/** `students,courses` (or undefined: every collection) as the list of collections, or an error naming the unknown one. */
export function parseCollections(text: string | undefined): ExportCollection[] {
  if (text === undefined) return [...MIRRORED_COLLECTIONS];
  const names = text
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  if (names.length === 0) throw new Error('--collections is empty');
  for (const name of names) {
    if (!(MIRRORED_COLLECTIONS as readonly string[]).includes(name))
      throw new Error(
        `--collections: ${name} is not a collection the API exports (${MIRRORED_COLLECTIONS.join(', ')})`,
      );
  }
  return [...new Set(names)] as ExportCollection[];
}
