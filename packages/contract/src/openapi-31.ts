/**
 * Turns the OpenAPI 3.0 document `@ts-rest/open-api` writes into a valid OpenAPI 3.1 one.
 * Neither ts-rest nor `@anatine/zod-openapi` emits 3.1, and what they emit mixes the two
 * (numeric `exclusiveMinimum` is 3.1; `nullable` is 3.0), so no validator accepted it. 3.1 is the
 * clean target: its schemas are JSON Schema 2020-12, so `null` is a type like any other.
 *
 * Titled schemas (every `.openapi({ title })` or `x-component` in the contract) become `components.schemas`
 * entries referenced by `$ref`, wherever they occur, so tools and our SDK generator see one named
 * type instead of copies.
 */

export type JsonObject = Record<string, unknown>;

const isObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Keywords whose value is one schema, a list of schemas, or a map of schemas. */
const SCHEMA_KEYWORDS = ['items', 'not', 'additionalProperties', 'contains'] as const;
const SCHEMA_LIST_KEYWORDS = ['oneOf', 'anyOf', 'allOf', 'prefixItems'] as const;
const SCHEMA_MAP_KEYWORDS = ['properties', 'patternProperties'] as const;

/** Rewrites one schema (and those inside it) from the 3.0 dialect to 3.1. */
function convertSchema(input: JsonObject, hoist: (schema: JsonObject) => JsonObject): JsonObject {
  const schema: JsonObject = { ...input };
  for (const keyword of SCHEMA_KEYWORDS) {
    if (isObject(schema[keyword])) schema[keyword] = convertSchema(schema[keyword], hoist);
  }
  for (const keyword of SCHEMA_LIST_KEYWORDS) {
    const list = schema[keyword];
    if (Array.isArray(list)) {
      schema[keyword] = (list as unknown[]).map((item) =>
        isObject(item) ? convertSchema(item, hoist) : item,
      );
    }
  }
  for (const keyword of SCHEMA_MAP_KEYWORDS) {
    const map = schema[keyword];
    if (isObject(map)) {
      schema[keyword] = Object.fromEntries(
        Object.entries(map).map(([name, value]) => [
          name,
          isObject(value) ? convertSchema(value, hoist) : value,
        ]),
      );
    }
  }

  // 3.0 `example` is deprecated in 3.1 schemas; JSON Schema's `examples` is a list.
  if ('example' in schema) {
    schema.examples = [schema.example];
    delete schema.example;
  }
  // 3.0 boolean `exclusiveMinimum: true` + `minimum` is 3.1's numeric `exclusiveMinimum`.
  for (const [exclusive, bound] of [
    ['exclusiveMinimum', 'minimum'],
    ['exclusiveMaximum', 'maximum'],
  ] as const) {
    if (schema[exclusive] === true) {
      schema[exclusive] = schema[bound];
      delete schema[bound];
    } else if (schema[exclusive] === false) {
      delete schema[exclusive];
    }
  }
  // zod's `.positive()` next to `.min(0)` gives both bounds; the exclusive one is the tighter.
  if (typeof schema.exclusiveMinimum === 'number' && typeof schema.minimum === 'number') {
    if (schema.exclusiveMinimum >= schema.minimum) delete schema.minimum;
    else delete schema.exclusiveMinimum;
  }
  if (typeof schema.exclusiveMaximum === 'number' && typeof schema.maximum === 'number') {
    if (schema.exclusiveMaximum <= schema.maximum) delete schema.maximum;
    else delete schema.exclusiveMaximum;
  }
  // A 3.0 single-member `allOf` only carried siblings next to a `$ref`; 3.1 allows them directly.
  const allOf = schema.allOf;
  if (Array.isArray(allOf) && allOf.length === 1 && isObject(allOf[0]) && '$ref' in allOf[0]) {
    delete schema.allOf;
    Object.assign(schema, allOf[0]);
  }

  const nullable = schema.nullable === true;
  delete schema.nullable;
  // `x-component` names a copy that differs from its original only in description.
  if (typeof schema['x-component'] === 'string') {
    schema.title = schema['x-component'];
    delete schema['x-component'];
  }
  const named = typeof schema.title === 'string' ? hoist(schema) : schema;
  return nullable ? withNull(named) : named;
}

/** The schema, with `null` allowed as well. */
function withNull(schema: JsonObject): JsonObject {
  if (typeof schema.type === 'string' && !('$ref' in schema)) {
    const result: JsonObject = { ...schema, type: [schema.type, 'null'] };
    if (Array.isArray(schema.enum)) result.enum = [...(schema.enum as unknown[]), null];
    return result;
  }
  const { description, ...rest } = schema;
  return {
    ...(typeof description === 'string' && { description }),
    anyOf: [rest, { type: 'null' }],
  };
}

/** Deep equality of JSON values, key order ignored. */
function sameJson(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) || Array.isArray(b)) {
    return (
      Array.isArray(a) &&
      Array.isArray(b) &&
      a.length === b.length &&
      a.every((item, i) => sameJson(item, b[i]))
    );
  }
  if (isObject(a) && isObject(b)) {
    const keys = Object.keys(a);
    return (
      keys.length === Object.keys(b).length &&
      keys.every((key) => key in b && sameJson(a[key], b[key]))
    );
  }
  return a === b;
}

/** Calls `visit` on every schema that sits directly in a parameter, a header or a media type. */
function eachOperationSchema(
  document: JsonObject,
  visit: (schema: JsonObject) => JsonObject,
): void {
  const paths = isObject(document.paths) ? document.paths : {};
  for (const item of Object.values(paths)) {
    if (!isObject(item)) continue;
    for (const operation of Object.values(item)) {
      if (!isObject(operation)) continue;
      for (const parameter of Array.isArray(operation.parameters) ? operation.parameters : []) {
        if (isObject(parameter) && isObject(parameter.schema)) {
          parameter.schema = visit(parameter.schema);
        }
      }
      const bodies = [
        operation.requestBody,
        ...Object.values(isObject(operation.responses) ? operation.responses : {}),
      ];
      for (const body of bodies) {
        if (!isObject(body) || !isObject(body.content)) continue;
        for (const media of Object.values(body.content)) {
          if (isObject(media) && isObject(media.schema)) media.schema = visit(media.schema);
        }
      }
    }
  }
}

export function toOpenApi31(input: JsonObject): JsonObject {
  const document = structuredClone(input);
  const components = isObject(document.components) ? document.components : {};
  document.components = components;
  const source = isObject(components.schemas) ? components.schemas : {};
  const schemas: JsonObject = {};

  // A titled schema becomes (or is found as) a component; where it was used, a `$ref` remains,
  // with the description that was written for that use.
  // A component keeps its own description; one first met at a use site describes that use only.
  let describesComponent = true;
  const hoist = (schema: JsonObject): JsonObject => {
    const { title, description, ...rest } = schema;
    const name = title as string;
    const existing = schemas[name];
    const candidate = { title: name, ...rest };
    if (existing === undefined) {
      schemas[name] = {
        ...candidate,
        ...(describesComponent && typeof description === 'string' && { description }),
      };
    } else if (!sameJson(withoutDescription(existing as JsonObject), candidate)) {
      throw new Error(`Two different schemas are titled ${name}; give one another title.`);
    }
    return {
      $ref: `#/components/schemas/${name}`,
      ...(typeof description === 'string' &&
        description !== (schemas[name] as JsonObject).description && { description }),
    };
  };

  // Components first, so a component's own description is the one it keeps.
  for (const [name, schema] of Object.entries(source)) {
    if (!isObject(schema)) continue;
    const converted = convertSchema({ title: name, ...schema }, hoist);
    if (!('$ref' in converted) || converted.$ref !== `#/components/schemas/${name}`) {
      schemas[name] = converted;
    }
  }
  describesComponent = false;
  eachOperationSchema(document, (schema) => convertSchema(schema, hoist));
  components.schemas = Object.fromEntries(
    Object.keys(schemas)
      .sort()
      .map((name) => [name, schemas[name]]),
  );
  document.openapi = '3.1.0';
  return document;
}

function withoutDescription(schema: JsonObject): JsonObject {
  const { description: _description, ...rest } = schema;
  return rest;
}
