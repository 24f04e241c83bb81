/**
 * Reads the contract's OpenAPI 3.1 document into the SDK model. This is the one place that
 * interprets JSON Schema for the generators; it understands exactly the shapes the contract
 * produces and throws on anything else, so a new kind of schema is noticed here rather than
 * emitted wrongly in two languages.
 */
import type {
  Deprecated,
  EnumType,
  EventType,
  Field,
  Model,
  Operation,
  QueryParam,
  Resource,
  SdkModel,
  TypeRef,
  UnionType,
} from './model';

import { bodySchema, isObject, isUpload, type Json } from './request-body';

export const camelCase = (snake: string): string =>
  snake.replace(/[_.]([a-z0-9])/g, (_, c: string) => c.toUpperCase());
export const snakeCase = (camel: string): string =>
  camel.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
export const pascalCase = (name: string): string => {
  const camel = camelCase(name);
  return camel.charAt(0).toUpperCase() + camel.slice(1);
};

const REF_PREFIX = '#/components/schemas/';
const refName = (ref: string): string => {
  if (!ref.startsWith(REF_PREFIX)) throw new Error(`Unsupported $ref ${ref}`);
  return ref.slice(REF_PREFIX.length);
};

/** Suffixes of input and wrapper schemas, dropped when naming the enums of their fields. */
const MODEL_SUFFIXES = /(Create|Update|WithSecret|List|Fail|Refund|PreviousAttributes)$/;

const singular = (word: string): string =>
  word.endsWith('ies') ? `${word.slice(0, -3)}y` : word.replace(/s$/, '');

const FORMATS = new Set(['date-time', 'date', 'uri', 'email', 'uuid']);
/** The pattern of a prefixed public id: `^stu_[0-9A-HJKMNP-TV-Z]{26}$` (a ULID after the prefix). */
const ID_PATTERN = /^\^([a-z]+)_\[0-9A-HJKMNP-TV-Z\]\{26\}\$$/;

/**
 * Names and collects the enums, models and unions of the document's schemas as they are read;
 * a class so that each reading step is its own method over the shared maps.
 */
class SchemaReader {
  readonly enums = new Map<string, EnumType>();
  readonly models = new Map<string, Model>();
  readonly unions = new Map<string, UnionType>();
  readonly roles = new Map<string, Model['role']>();

  constructor(
    private readonly schemas: Record<string, Json>,
    /** Well-known value sets get one shared name wherever they appear. */
    private readonly wellKnown: [string, string[], string][],
  ) {}

  enumFor(values: string[], owner: string, field: string): TypeRef {
    const sorted = [...values].sort().join('\n');
    for (const [name, known, description] of this.wellKnown) {
      if ([...known].sort().join('\n') === sorted) {
        if (!this.enums.has(name)) this.enums.set(name, { name, values: known, description });
        return { kind: 'enum', name };
      }
    }
    const base = owner.replace(MODEL_SUFFIXES, '');
    for (const name of [`${base}${pascalCase(field)}`, `${owner}${pascalCase(field)}`]) {
      const existing = this.enums.get(name);
      if (existing === undefined) {
        this.enums.set(name, { name, values });
        return { kind: 'enum', name };
      }
      if ([...existing.values].sort().join('\n') === sorted) return { kind: 'enum', name };
    }
    throw new Error(`No name for the enum of ${owner}.${field}`);
  }

  /** The enum `name`, when it exists with exactly the values of `schema`'s enum. */
  sameEnum(schema: Json, name: string): TypeRef | undefined {
    if (!Array.isArray(schema.enum)) return undefined;
    const existing = this.enums.get(name);
    const sorted = (values: readonly unknown[]) => [...values].map(String).sort().join('\n');
    if (!existing || sorted(existing.values) !== sorted(schema.enum)) return undefined;
    return { kind: 'enum', name };
  }

  /** The type of a schema, and whether it also admits null. */
  typeOf(schema: Json, owner: string, field: string): { type: TypeRef; nullable: boolean } {
    if (typeof schema.$ref === 'string') {
      const name = refName(schema.$ref);
      const target = this.schemas[name];
      if (target?.oneOf) return { type: this.unionOf(name), nullable: false };
      return { type: { kind: 'model', name }, nullable: false };
    }
    if (Array.isArray(schema.anyOf) || Array.isArray(schema.oneOf)) {
      const members = (schema.anyOf ?? schema.oneOf) as Json[];
      const nonNull = members.filter((member) => member.type !== 'null');
      const nullable = nonNull.length < members.length;
      // A choice between string enums (e.g. scopes or `all`) is one enum.
      if (nonNull.every((member) => Array.isArray(member.enum))) {
        const values = nonNull.flatMap((member) => member.enum as string[]);
        return { type: this.enumFor(values, owner, singular(field)), nullable };
      }
      if (nonNull.length !== 1) throw new Error(`Unsupported union at ${owner}.${field}`);
      return { type: this.typeOf(nonNull[0]!, owner, field).type, nullable };
    }
    const types = Array.isArray(schema.type) ? (schema.type as string[]) : [schema.type as string];
    const nullable = types.includes('null');
    const type = types.filter((t) => t !== 'null');
    if (type.length !== 1)
      throw new Error(`Unsupported type ${JSON.stringify(schema.type)} at ${owner}.${field}`);
    // `deleted: true` and the like: a boolean fixed by the schema is still a boolean to a client.
    if (Array.isArray(schema.enum) && type[0] === 'boolean')
      return {
        type:
          schema.enum.length === 1
            ? { kind: 'boolean', value: schema.enum[0] as boolean }
            : { kind: 'boolean' },
        nullable,
      };
    if (Array.isArray(schema.enum)) {
      const values = (schema.enum as unknown[]).filter((v): v is string => typeof v === 'string');
      if (values.length === 1) return { type: { kind: 'literal', value: values[0]! }, nullable };
      return { type: this.enumFor(values, owner, field), nullable };
    }
    return { type: this.kindOf(type[0]!, schema, owner, field), nullable };
  }

  /** The type of a schema of one non-null JSON type, with no enum. */
  private kindOf(kind: string, schema: Json, owner: string, field: string): TypeRef {
    switch (kind) {
      case 'string':
        return stringType(schema);
      case 'integer':
      case 'number':
      case 'boolean':
        return { kind };
      case 'array':
        return {
          kind: 'array',
          items: this.typeOf(schema.items as Json, owner, singular(field)).type,
        };
      case 'object': {
        if (isObject(schema.properties)) {
          // An untitled nested object: a model of its own, named after where it sits.
          const name = `${owner.replace(MODEL_SUFFIXES, '')}${pascalCase(field)}`;
          this.addModel(name, schema, this.roles.get(owner) ?? 'resource');
          return { kind: 'model', name };
        }
        // `additionalProperties: {}` (any value, as zod's `z.record(z.unknown())` writes it) is unknown.
        const values =
          isObject(schema.additionalProperties) && Object.keys(schema.additionalProperties).length
            ? this.typeOf(schema.additionalProperties, owner, field).type
            : ({ kind: 'unknown' } as TypeRef);
        return { kind: 'map', values };
      }
      default:
        throw new Error(`Unsupported type ${kind} at ${owner}.${field}`);
    }
  }

  unionOf(name: string): TypeRef {
    const schema = this.schemas[name]!;
    if (!this.unions.has(name)) {
      const members = (schema.oneOf as Json[]).map((member) => refName(member.$ref as string));
      const discriminator = isObject(schema.discriminator)
        ? (schema.discriminator.propertyName as string)
        : undefined;
      this.unions.set(name, {
        name,
        members,
        ...(discriminator && { discriminator }),
        ...(typeof schema.description === 'string' && { description: schema.description }),
      });
      for (const member of members) this.addModel(member, this.schemas[member]!, 'event');
    }
    return { kind: 'union', name };
  }

  addModel(name: string, schema: Json, role: Model['role']): void {
    if (this.models.has(name)) return;
    this.roles.set(name, role);
    const required = new Set((schema.required as string[] | undefined) ?? []);
    const model: Model = {
      name,
      ...(typeof schema.description === 'string' && { description: schema.description }),
      fields: [],
      role,
    };
    this.models.set(name, model);
    for (const [fieldName, fieldSchema] of Object.entries(
      (schema.properties ?? {}) as Record<string, Json>,
    )) {
      const { type, nullable } = this.typeOf(fieldSchema, name, fieldName);
      const field: Field = {
        name: fieldName,
        camel: camelCase(fieldName),
        type,
        required: required.has(fieldName),
        nullable,
        ...(typeof fieldSchema.description === 'string' && {
          description: fieldSchema.description,
        }),
        ...('default' in fieldSchema && { default: fieldSchema.default }),
        ...(Array.isArray(fieldSchema.examples) && { example: fieldSchema.examples[0] }),
        ...deprecatedOf(fieldSchema),
      };
      model.fields.push(field);
    }
  }
}

/** A string, with its format and, for a prefixed public id, its prefix. */
function stringType(schema: Json): TypeRef {
  const prefix =
    typeof schema.pattern === 'string' ? ID_PATTERN.exec(schema.pattern)?.[1] : undefined;
  return {
    kind: 'string',
    ...(typeof schema.format === 'string' &&
      FORMATS.has(schema.format) && { format: schema.format as 'date-time' }),
    ...(prefix && { prefix }),
  };
}

export function fromOpenApi(document: Json): SdkModel {
  const components = document.components as Json;
  const schemas = components.schemas as Record<string, Json>;
  const info = document.info as Json;
  const webhooks = (document.webhooks ?? {}) as Record<string, Json>;

  const eventTypes = Object.keys(webhooks);
  const securitySchemes = components.securitySchemes as Json;
  const oauth2 = securitySchemes.oauth2 as Json;
  const flows = oauth2.flows as Json;
  const clientCredentials = flows.clientCredentials as Json;
  const scopes = Object.keys(clientCredentials.scopes as Json);
  const reader = new SchemaReader(schemas, [
    ['Scope', scopes, 'A permission a token can hold.'],
    ['ScopeOrAll', [...scopes, 'all'], 'A scope to grant, or `all` for every scope.'],
    ['EventType', eventTypes, 'The type of an event.'],
  ]);

  // Roles first, from where each schema is used, so nested models inherit the right one.
  const paths = document.paths as Record<string, Record<string, Json>>;
  for (const item of Object.values(paths)) {
    for (const op of Object.values(item)) {
      const body = bodySchema(op.requestBody);
      if (body?.$ref) reader.roles.set(refName(body.$ref as string), 'input');
    }
  }
  reader.roles.set('Problem', 'problem');
  reader.roles.set('ProblemFieldError', 'problem');
  for (const [name, schema] of Object.entries(schemas)) {
    if (schema.oneOf) reader.unionOf(name);
  }
  for (const [name, schema] of Object.entries(schemas)) {
    if (!schema.oneOf) reader.addModel(name, schema, reader.roles.get(name) ?? 'resource');
  }

  const operations: Operation[] = [];
  for (const [path, item] of Object.entries(paths)) {
    for (const [httpMethod, op] of Object.entries(item)) {
      operations.push(
        ...withAlias(
          operationOf(reader, schemas, path, httpMethod.toUpperCase() as Operation['http'], op),
          op['x-sdk-name'],
        ),
      );
    }
  }

  return {
    version: info.version as string,
    resources: resourcesOf(operations),
    operations: operations.filter((operation) => operation.aliasOf === undefined),
    models: [...reader.models.values()],
    enums: [...reader.enums.values()],
    unions: [...reader.unions.values()],
    events: eventsOf(webhooks, schemas),
    scopes,
    tokenPath: clientCredentials.tokenUrl as string,
  };
}

function operationOf(
  reader: SchemaReader,
  schemas: Record<string, Json>,
  path: string,
  http: Operation['http'],
  op: Json,
): Operation {
  const id = op.operationId as string;
  const parts = id.split('.');
  if (parts.length !== 2) {
    throw new Error(`Operation id ${id} is not <resource>.<method>: nest no routers deeper`);
  }
  const [resource, method] = parts as [string, string];
  const body = bodySchema(op.requestBody);
  const requestBody = op.requestBody as Json | undefined;
  const { response, feed } = responseOf(schemas, id, op);
  return {
    id,
    resource: { camel: resource, snake: snakeCase(resource) },
    method: { camel: method, snake: snakeCase(method) },
    http,
    path,
    pathParams: [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!),
    query: queryOf(reader, op),
    ...(body && {
      body: { model: refName(body.$ref as string), required: requestBody?.required === true },
    }),
    ...(isUpload(requestBody) && { upload: true }),
    response,
    ...(feed && { feed }),
    scope: typeof op['x-required-scope'] === 'string' ? op['x-required-scope'] : null,
    summary: op.summary as string,
    ...(typeof op.description === 'string' && { description: op.description }),
    idempotent: http === 'POST',
    ...deprecatedOf(op),
  };
}

/** The query parameters of an operation; `name[op]` parameters merge into one range filter. */
/** `Import` for `imports.create`: the singular of the operation's resource, as a model is named. */
function resourceOwner(op: Json): string {
  const resource = String(op.operationId).split('.')[0]!;
  return pascalCase(singular(snakeCase(resource)));
}

function queryOf(reader: SchemaReader, op: Json): QueryParam[] {
  const parameters = ((op.parameters ?? []) as Json[]).filter((p) => p.in === 'query');
  const query: QueryParam[] = [];
  for (const parameter of parameters) {
    const wire = parameter.name as string;
    const schema = parameter.schema as Json;
    const range = /^(\w+)\[(\w+)\]$/.exec(wire);
    if (range) {
      const [, name, operator] = range as unknown as [string, string, string];
      const existing = query.find((q) => q.name === name);
      if (existing) {
        existing.operators!.push(operator);
        continue;
      }
      query.push({
        name,
        camel: camelCase(name),
        kind: 'range',
        type: reader.typeOf(schema, 'Query', name).type,
        operators: [operator],
        required: false,
        description: `Range filter on ${name}: any of gte, gt, lte, lt.`,
      });
      continue;
    }
    const enumValues = schema['x-enum-values'] as string[] | undefined;
    const idPrefix = schema['x-id-prefix'] as string | undefined;
    const sortable = schema['x-sortable'] as string[] | undefined;
    query.push({
      name: wire,
      camel: camelCase(wire),
      kind: 'scalar',
      // An upload's query holds its options: an enum with the values of its resource's field of
      // the same name is that field's type (`ImportMode` for `imports.create`'s `mode`). Other
      // operations' enums keep the `Query<Name>` names released SDKs have.
      type:
        (isUpload(op.requestBody)
          ? reader.sameEnum(schema, `${resourceOwner(op)}${pascalCase(wire)}`)
          : undefined) ?? reader.typeOf(schema, 'Query', wire).type,
      required: parameter.required === true,
      ...(typeof parameter.description === 'string' && { description: parameter.description }),
      ...(enumValues && { enumValues }),
      ...(idPrefix && { idPrefix }),
      ...(schema['x-external-ids'] === true && { externalIds: true }),
      ...(schema['x-integer-values'] === true && { integerValues: true }),
      ...(sortable && { sortable }),
      ...(typeof schema.maximum === 'number' && { maximum: schema.maximum }),
      ...deprecatedOf(parameter),
    });
  }
  return query;
}

/** What an operation's 2xx response holds, and the item of its feed if it is one. */
function responseOf(
  schemas: Record<string, Json>,
  id: string,
  op: Json,
): { response: Operation['response']; feed: Operation['feed'] } {
  const responses = op.responses as Record<string, Json>;
  const success = Object.keys(responses).find((status) => /^2\d\d$/.test(status));
  if (success === undefined) throw new Error(`Operation ${id} declares no 2xx response`);
  const content = responses[success]!.content as Json | undefined;
  const schema = content?.['application/json'] as Json | undefined;
  let response: Operation['response'] =
    content && Object.keys(content).length > 0 ? { kind: 'none', file: true } : { kind: 'none' };
  let feed: Operation['feed'];
  if (schema) {
    const name = refName((schema.schema as Json).$ref as string);
    const target = schemas[name]!;
    const data = isObject(target.properties)
      ? (target.properties.data as Json | undefined)
      : undefined;
    response =
      op['x-list'] === true && data && isObject(data.items)
        ? { kind: 'page', model: name, item: refName(data.items.$ref as string) }
        : { kind: 'model', model: name };
    if (op['x-feed'] === true && data && isObject(data.items))
      feed = { item: refName(data.items.$ref as string) };
  }
  return { response, feed };
}

/** The operations grouped by resource, in the order each resource first appears. */
/**
 * An operation the contract gives an SDK name (`x-sdk-name: changes.list`) sits there, and its
 * contract key (`events.changes`) stays as a deprecated alias of it: same request, no entry in
 * the operation tables or the reference.
 */
function withAlias(operation: Operation, sdkName: unknown): Operation[] {
  if (sdkName === undefined) return [operation];
  const parts = typeof sdkName === 'string' ? sdkName.split('.') : [];
  if (parts.length !== 2 || !parts.every((part) => /^[a-z][A-Za-z]*$/.test(part))) {
    throw new Error(
      `${operation.id}: x-sdk-name must be <resource>.<method>, got ${JSON.stringify(sdkName)}`,
    );
  }
  const [resource, method] = parts as [string, string];
  const renamed: Operation = {
    ...operation,
    resource: { camel: resource, snake: snakeCase(resource) },
    method: { camel: method, snake: snakeCase(method) },
  };
  const alias: Operation = {
    ...operation,
    aliasOf: sdkName as string,
    deprecated: { ...operation.deprecated, replacement: `\`${sdkName as string}\`` },
  };
  return [renamed, alias];
}

function resourcesOf(operations: Operation[]): Resource[] {
  const resources: Resource[] = [];
  for (const operation of operations) {
    let resource = resources.find((r) => r.camel === operation.resource.camel);
    if (!resource) {
      resource = {
        camel: operation.resource.camel,
        snake: operation.resource.snake,
        pascal: pascalCase(operation.resource.snake),
        operations: [],
      };
      resources.push(resource);
    }
    resource.operations.push(operation);
  }
  return resources;
}

function eventsOf(webhooks: Record<string, Json>, schemas: Record<string, Json>): EventType[] {
  return Object.entries(webhooks).map(([type, item]) => {
    const post = item.post as Json;
    const model = refName((bodySchema(post.requestBody) as Json).$ref as string);
    const data = (schemas[model]!.properties as Record<string, Json>).data!;
    return {
      type,
      model,
      data: refName(data.$ref as string),
      scope: typeof post['x-required-scope'] === 'string' ? post['x-required-scope'] : null,
    };
  });
}

/** `{ deprecated }` for an operation, parameter or schema marked `deprecated: true`, else nothing. */
function deprecatedOf(node: Json): { deprecated?: Deprecated } {
  if (node.deprecated !== true) return {};
  const details = isObject(node['x-deprecation']) ? node['x-deprecation'] : {};
  const deprecated: Deprecated = {};
  for (const key of ['since', 'sunset', 'link', 'replacement'] as const) {
    if (typeof details[key] === 'string') deprecated[key] = details[key];
  }
  return { deprecated };
}
