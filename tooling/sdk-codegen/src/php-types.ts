/**
 * PHP types of the SDK model's types: native declarations, docblock types and array shapes, and the
 * expressions that cast a decoded value in and serialize it back out.
 */
import { type Context, str } from './php-source';
import type { Field, TypeRef } from './model';

// --- types -------------------------------------------------------------------------------------

export function isDateTime(type: TypeRef): boolean {
  return type.kind === 'string' && type.format === 'date-time';
}

/** The declared (native) PHP type of a response value. */
export function nativeType(ctx: Context, type: TypeRef): string {
  switch (type.kind) {
    case 'string':
      return isDateTime(type) ? '\\DateTimeImmutable' : 'string';
    case 'enum':
    case 'literal':
      return 'string';
    case 'integer':
      return 'int';
    case 'number':
      return 'float';
    case 'boolean':
      return 'bool';
    case 'model':
      return type.name;
    case 'union':
      return ctx.unionBase(type.name);
    case 'array':
    case 'map':
      return 'array';
    case 'unknown':
      return 'mixed';
  }
}

/** The docblock type of a response value (more precise than the native type). */
export function docType(ctx: Context, type: TypeRef): string {
  switch (type.kind) {
    case 'enum':
      // Open on output: a value a newer server added is still a string.
      return `${type.name}::*|string`;
    case 'literal':
      return `${str(type.value)}|string`;
    case 'union':
      return [...ctx.union(type.name).members, `Unknown${type.name}`].join('|');
    case 'array':
      return `list<${docTypeParenthesised(ctx, type.items)}>`;
    case 'map':
      return `array<string, ${docTypeParenthesised(ctx, type.values)}>`;
    case 'string':
    case 'integer':
    case 'number':
    case 'boolean':
    case 'model':
    case 'unknown':
      return nativeType(ctx, type);
  }
}

function docTypeParenthesised(ctx: Context, type: TypeRef): string {
  const t = docType(ctx, type);
  return t.includes('|') && type.kind !== 'array' && type.kind !== 'map' ? `(${t})` : t;
}

/** Whether the docblock says more than the native type, so the property gets a `@var`. */
export function needsDocType(type: TypeRef): boolean {
  return ['enum', 'literal', 'union', 'array', 'map'].includes(type.kind);
}

/** The array-shape type of an input value (closed enums: the values the server accepts). */
function inputType(ctx: Context, type: TypeRef, indent: string, depth = 0): string {
  switch (type.kind) {
    case 'string':
      return isDateTime(type) ? 'string|\\DateTimeInterface' : 'string';
    case 'enum':
      return `${type.name}::*`;
    case 'literal':
      return str(type.value);
    case 'integer':
      return 'int';
    case 'number':
      return 'float|int';
    case 'boolean':
      return 'bool';
    case 'model': {
      const m = ctx.model(type.name);
      return depth > 3 ? 'array<string, mixed>' : shape(ctx, m.fields, indent, depth + 1);
    }
    case 'union':
      return 'array<string, mixed>';
    case 'array': {
      const inner = inputType(ctx, type.items, indent, depth);
      return `list<${inner}>`;
    }
    case 'map':
      return `array<string, ${inputType(ctx, type.values, indent, depth)}>`;
    case 'unknown':
      return 'mixed';
  }
}

/** `array{\n name?: type,\n}` for the fields of an input model. */
export function shape(ctx: Context, fields: Field[], indent: string, depth = 0): string {
  if (fields.length === 0) return 'array<string, mixed>';
  const inner = `${indent}    `;
  const lines = fields.map((f) => {
    const type = inputType(ctx, f.type, inner, depth) + (f.nullable ? '|null' : '');
    return `${inner}${f.name}${f.required ? '' : '?'}: ${type},`;
  });
  return `array{\n${lines.join('\n')}\n${indent}}`;
}

/** The enums an input shape or a model's docblocks name, to `use` them. */
export function enumsIn(ctx: Context, type: TypeRef, seen = new Set<string>()): string[] {
  switch (type.kind) {
    case 'enum':
      return [type.name];
    case 'array':
      return enumsIn(ctx, type.items, seen);
    case 'map':
      return enumsIn(ctx, type.values, seen);
    case 'model': {
      const m = ctx.model(type.name);
      if (m.role !== 'input' || seen.has(m.name)) return [];
      seen.add(m.name);
      return m.fields.flatMap((f) => enumsIn(ctx, f.type, seen));
    }
    case 'string':
    case 'literal':
    case 'integer':
    case 'number':
    case 'boolean':
    case 'union':
    case 'unknown':
      return [];
  }
}

/** The object paths of an input model, for `Json::encodeBody()` (see Core\Json). */
export function objectPaths(ctx: Context, fields: Field[], prefix = '', depth = 0): string[] {
  const paths = [prefix];
  if (depth > 5) return paths;
  for (const f of fields) {
    const path = prefix === '' ? f.name : `${prefix}.${f.name}`;
    paths.push(...objectPathsOf(ctx, f.type, path, depth));
  }
  return paths;
}

function objectPathsOf(ctx: Context, type: TypeRef, path: string, depth: number): string[] {
  switch (type.kind) {
    case 'model':
      return objectPaths(ctx, ctx.model(type.name).fields, path, depth + 1);
    case 'map':
    case 'union':
      return [path];
    case 'array':
      return objectPathsOf(ctx, type.items, `${path}.*`, depth);
    case 'string':
    case 'enum':
    case 'literal':
    case 'integer':
    case 'number':
    case 'boolean':
    case 'unknown':
      return [];
  }
}
