/**
 * The SDK model: what every language emitter reads. Built from the OpenAPI document (which is
 * generated from the contract), so the PHP and Python clients derive from the same source as the
 * server and the TypeScript SDK. Emitters never read the OpenAPI document themselves: one reading
 * of JSON Schema, here, so the two languages cannot interpret a schema differently.
 */

/** A value's type, as far as an SDK needs to know it. */
export type TypeRef =
  | {
      kind: 'string';
      format?: 'date-time' | 'date' | 'uri' | 'email' | 'uuid';
      /** A prefixed public id (`stu`), from the schema's pattern: TypeScript types it `stu_${string}`. */
      prefix?: string;
    }
  | { kind: 'integer' }
  | { kind: 'number' }
  /** `value`: a boolean the schema fixes, e.g. `deleted: true`. */
  | { kind: 'boolean'; value?: boolean }
  /** A named string enum (see `SdkModel.enums`); open on output, closed on input. */
  | { kind: 'enum'; name: string }
  /** A single fixed string, e.g. `object: "student"` or an event's `type`. */
  | { kind: 'literal'; value: string }
  /** A named object schema (see `SdkModel.models`). */
  | { kind: 'model'; name: string }
  /** A named union of models (see `SdkModel.unions`), e.g. `Event`. */
  | { kind: 'union'; name: string }
  | { kind: 'array'; items: TypeRef }
  /** An object with free keys (`additionalProperties`), e.g. `metadata`. */
  | { kind: 'map'; values: TypeRef }
  /** Anything (JSON). */
  | { kind: 'unknown' };

/**
 * An operation, parameter or field the API has deprecated (OpenAPI `deprecated: true`, with the
 * contract's `x-deprecation` dates). Emitters write it into the docs (PHP `@deprecated`, a Python
 * `.. deprecated::` note); the runtime warning comes from the server's `Deprecation` header.
 */
export interface Deprecated {
  since?: string;
  sunset?: string;
  link?: string;
  replacement?: string;
}

export interface Field {
  /** The JSON name, e.g. `grade_level`. */
  name: string;
  /** In PHP/TS style: `gradeLevel`. */
  camel: string;
  type: TypeRef;
  /** The key is always present (responses) / must be sent (inputs). */
  required: boolean;
  /** `null` is a valid value. */
  nullable: boolean;
  description?: string;
  /** Inputs only: the value the server assumes when the key is absent. */
  default?: unknown;
  /** An example value from the schema, for documentation samples. */
  example?: unknown;
  deprecated?: Deprecated;
}

export interface Model {
  /** PascalCase, from `components.schemas`: `Student`, `StudentCreate`, `StudentCreatedEvent`. */
  name: string;
  description?: string;
  fields: Field[];
  /**
   * - `resource`: an API object returned by operations (`Student`, `DeletedStudent`, `PageMeta`, …)
   * - `input`: a request body (`StudentCreate`, `StudentUpdate`)
   * - `event`: one member of a union (`StudentCreatedEvent` of `Event`)
   * - `problem`: the problem details document and its field errors
   */
  role: 'resource' | 'input' | 'event' | 'problem';
}

export interface EnumType {
  /** PascalCase: `StudentStatus`, `EventType`, `Scope`. */
  name: string;
  values: string[];
  description?: string;
}

/** One of several models, told apart by the `discriminator` field (e.g. `Event` by `type`). */
export interface UnionType {
  name: string;
  /** Model names, each with a literal-typed discriminator field. */
  members: string[];
  discriminator?: string;
  description?: string;
}

export interface QueryParam {
  /** The name on the wire and in the params object/kwargs: `per_page`, `status`, `created_at`. */
  name: string;
  camel: string;
  /**
   * - `scalar`: `?name=value` (a filter taking several values comma-separated is still a string)
   * - `range`: `?name[gte]=…&name[lt]=…`, given as an object `{gte?, gt?, lte?, lt?}`
   */
  kind: 'scalar' | 'range';
  type: TypeRef;
  /** For `range`: the operators the server accepts, e.g. ['gte', 'gt', 'lte', 'lt']. */
  operators?: string[];
  required: boolean;
  description?: string;
  /** For filters restricted to an enum's values (comma-separated allowed): that enum. */
  enumValues?: string[];
  /** For filters on ids of another resource (`student_id`): the ids' prefix, `stu`. */
  idPrefix?: string;
  /** Such a filter also takes `ext:<external_id>` of the record. */
  externalIds?: boolean;
  /** For filters on integers (comma-separated allowed). */
  integerValues?: boolean;
  /** For `sort`: the fields it accepts, each optionally prefixed `-`. */
  sortable?: string[];
  /** The largest value a number parameter takes (`per_page`: 100). */
  maximum?: number;
  deprecated?: Deprecated;
}

export interface Operation {
  /** `students.list`, `webhookEndpoints.rotateSecret` (the contract's keys, the OpenAPI operationId). */
  id: string;
  /** The resource namespace: `students`, `webhookEndpoints` (camel) / `webhook_endpoints` (snake). */
  resource: { camel: string; snake: string };
  /** The method on the namespace: `list`, `rotateSecret` (camel) / `rotate_secret` (snake). */
  method: { camel: string; snake: string };
  http: 'GET' | 'POST' | 'PATCH' | 'DELETE' | 'PUT';
  /** `/v1/students/{id}` */
  path: string;
  /** Path parameters in order of appearance: `['id']`. */
  pathParams: string[];
  query: QueryParam[];
  /** The request body's named input model, if the operation takes a body. */
  body?: { model: string; required: boolean };
  /**
   * The body is a file, sent as `multipart/form-data` with one part named `file` (an import's
   * CSV or NDJSON): the SDKs take the file's bytes (or a stream of them) instead of a model.
   */
  upload?: boolean;
  /**
   * - `model`: a JSON body of the named model, or of the named union (`events.retrieve` → `Event`)
   * - `page`: a list page (`{ data: Item[], meta, links }`, the named `*List` model), auto-paginated;
   *   `item` is a model or a union name
   * - `none`: 204, no body; with `file`, a body that is not JSON (an export's file), handed back as text
   */
  response:
    | { kind: 'model'; model: string }
    | { kind: 'page'; model: string; item: string }
    | { kind: 'none'; file?: boolean };
  /** The scope a token needs; null: any valid token. */
  scope: string | null;
  summary: string;
  description?: string;
  /**
   * A change feed read after a cursor (`x-feed`): the SDKs add `follow` to the namespace, which
   * yields `item`s (the page's `data` items) and resumes from the last cursor.
   */
  feed?: { item: string };
  /**
   * The SDK name this operation is a deprecated alias of (`changes.list` for `events.changes`):
   * emitted as a method that calls the same route, left out of operation tables and the reference.
   */
  aliasOf?: string;
  /** Sends a generated `Idempotency-Key` (every POST). */
  idempotent: boolean;
  deprecated?: Deprecated;
}

export interface Resource {
  camel: string;
  snake: string;
  /** `Students`, `WebhookEndpoints`: for class names (`StudentsService`). */
  pascal: string;
  operations: Operation[];
}

export interface EventType {
  /** `student.created` */
  type: string;
  /** The event's model: `StudentCreatedEvent`. */
  model: string;
  /** The model of its `data`: `Student`. */
  data: string;
  /** The scope that reads it. */
  scope: string | null;
}

export interface SdkModel {
  /** The API/package version the document states (`info.version`). */
  version: string;
  /** The API version every event and response is written in (e.g. `2026-11-01`), if stated. */
  apiVersion?: string;
  resources: Resource[];
  /**
   * Every operation, in contract order (also reachable through `resources`, which also hold the
   * deprecated aliases, `aliasOf`, that this list leaves out).
   */
  operations: Operation[];
  models: Model[];
  enums: EnumType[];
  unions: UnionType[];
  events: EventType[];
  scopes: string[];
  /** OAuth 2.0 token endpoint path, from the security scheme (`/oauth/token`). */
  tokenPath: string;
}

/** The largest `per_page` a list operation accepts (the API's convention, 100, if none says). */
export function maxPerPage(ops: readonly Operation[]): number {
  return ops.flatMap((op) => op.query).find((param) => param.name === 'per_page')?.maximum ?? 100;
}
