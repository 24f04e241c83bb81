/**
 * The TypeScript emitter: writes `packages/client/src/generated/` from the SDK model, the same
 * model the PHP and Python clients are generated from.
 *
 * Why generate rather than infer the types from the contract's zod schemas: inferred types are
 * only as small as the zod types they come from. Published that way, the client's declarations
 * were 1.8 MB and a 16-line consumer took 20 s to type-check. Plain interfaces say the same thing
 * in a few hundred kilobytes less, and `contract-equivalence.test-d.ts` (written here too) proves
 * in the client's typecheck that each one is the type the contract infers, so they cannot drift.
 *
 * - `types.ts`: every model, enum, event and query as a named type;
 * - `routes.ts`: the route table the client runs on (method, path, query names, list or not)
 *   and the `PlatformClient` interface, one resource interface per namespace;
 * - `event-shapes.ts`: a compact description of every event, for the webhook verifier to check
 *   payloads without a schema library (see `src/event-shape.ts`);
 * - `constants.ts`: the values of the enums a form offers (the export collections), so a portal
 *   picker follows the contract's resource registry;
 * - `contract-equivalence.test-d.ts`: the type-level proof above (never shipped).
 */
import { deprecationText } from './deprecation';
import { emitEquivalence } from './typescript-equivalence';
import { HEADER, queryTypeName, quote } from './typescript-text';
import type { Deprecated, Field, Model, Operation, QueryParam, SdkModel, TypeRef } from './model';

export const TS_ROOT = 'packages/client/src/generated';

const key = (name: string): string => (/^[A-Za-z_$][\w$]*$/.test(name) ? name : quote(name));

/** A JSDoc block from a description, indented; nothing when there is no text. */
function doc(text: string | undefined, indent = ''): string {
  if (!text) return '';
  const lines = text.replace(/\*\//g, '*\\/').split('\n');
  if (lines.length === 1) return `${indent}/** ${lines[0]} */\n`;
  return `${indent}/**\n${lines.map((line) => `${indent} * ${line}`.trimEnd()).join('\n')}\n${indent} */\n`;
}

/** A description with `@deprecated …` after it (editors strike the name through). */
const withDeprecation = (text: string | undefined, deprecated: Deprecated | undefined) =>
  deprecated
    ? [text, `@deprecated ${deprecationText(deprecated)}`].filter(Boolean).join('\n\n')
    : text;

/** The TypeScript type of a value; `input` types ids as plain strings (any id may be sent). */
function tsType(type: TypeRef, input: boolean): string {
  switch (type.kind) {
    case 'string':
      return type.prefix && !input ? `\`${type.prefix}_\${string}\`` : 'string';
    case 'integer':
    case 'number':
      return 'number';
    case 'boolean':
      return type.value === undefined ? 'boolean' : String(type.value);
    case 'enum':
    case 'model':
    case 'union':
      return type.name;
    case 'literal':
      return quote(type.value);
    case 'array': {
      const items = tsType(type.items, input);
      return /[ |]/.test(items) ? `(${items})[]` : `${items}[]`;
    }
    case 'map':
      return `Record<string, ${tsType(type.values, input)}>`;
    case 'unknown':
      return 'unknown';
  }
}

function fieldLine(field: Field, input: boolean): string {
  const type = tsType(field.type, input) + (field.nullable ? ' | null' : '');
  return `${doc(withDeprecation(field.description, field.deprecated), '  ')}  ${key(field.name)}${field.required ? '' : '?'}: ${type};\n`;
}

/** The name of an operation's query type: `StudentsListQuery`. */
function queryParamType(param: QueryParam): string {
  if (param.sortable) return `SortInput<${param.sortable.map(quote).join(' | ')}>`;
  if (param.enumValues) return `ListFilter<${param.enumValues.map(quote).join(' | ')}>`;
  if (param.idPrefix)
    return `\`${param.idPrefix}_\${string}\`${param.externalIds ? ' | `ext:${string}`' : ''}`;
  if (param.integerValues) return 'IntegerFilter';
  return tsType(param.type, true);
}

const OPERATORS = ['gte', 'gt', 'lte', 'lt'];

/**
 * The parameters every list shares (`page`, `cursor`, `per_page`, `updated_since`) are written
 * once, as `ListPageQuery`, which each list's query type extends; written out on every list they
 * were a fifth of the declaration files (the budget in packages/client/scripts/budgets.mjs).
 * A list whose own version of one differs (another description or type) keeps all of them inline.
 */
const SHARED_LIST_PARAMS = ['page', 'cursor', 'per_page', 'updated_since'];
const SHARED_LIST_QUERY = 'ListPageQuery';

const paramLine = (param: QueryParam): string =>
  `${doc(withDeprecation(param.description, param.deprecated), '  ')}  ${key(param.name)}${param.required ? '' : '?'}: ${queryParamType(param)};\n`;

/** The shared list parameters as most lists declare them, or undefined if no list has all. */
function sharedListParams(ops: Operation[]): QueryParam[] | undefined {
  const versions = new Map<string, { params: QueryParam[]; lists: number }>();
  for (const op of ops) {
    const params = SHARED_LIST_PARAMS.map((name) => op.query.find((p) => p.name === name));
    if (params.some((p) => p === undefined)) continue;
    const text = (params as QueryParam[]).map(paramLine).join('');
    const version = versions.get(text) ?? { params: params as QueryParam[], lists: 0 };
    versions.set(text, { ...version, lists: version.lists + 1 });
  }
  return [...versions.values()].sort((a, b) => b.lists - a.lists)[0]?.params;
}

const sharesListParams = (op: Operation, shared: QueryParam[] | undefined): boolean =>
  shared !== undefined &&
  shared.every((param) => {
    const own = op.query.find((p) => p.name === param.name);
    return own !== undefined && paramLine(own) === paramLine(param);
  });

function queryType(op: Operation, shared: QueryParam[] | undefined): string {
  // Range filters with all four operators are one `RangeFilters<fields, value>` per value type.
  const ranges = new Map<string, string[]>();
  for (const param of op.query) {
    if (param.kind !== 'range') continue;
    if (OPERATORS.some((o) => !param.operators?.includes(o)))
      throw new Error(`${op.id}: range filter ${param.name} lacks an operator`);
    const value = tsType(param.type, true);
    ranges.set(value, [...(ranges.get(value) ?? []), param.name]);
  }
  const sharing = sharesListParams(op, shared);
  const bases = [
    ...(sharing ? [SHARED_LIST_QUERY] : []),
    ...[...ranges].map(
      ([value, fields]) => `RangeFilters<${fields.map(quote).join(' | ')}, ${value}>`,
    ),
  ];
  let out = `${doc(`The query of \`${op.id}\`.`)}export interface ${queryTypeName(op)}${bases.length ? ` extends ${bases.join(', ')}` : ''} {\n`;
  for (const param of op.query) {
    if (param.kind === 'range' || (sharing && SHARED_LIST_PARAMS.includes(param.name))) continue;
    out += paramLine(param);
  }
  return `${out}}\n`;
}

/**
 * The fields, type and documentation alike, that every member of a union of three or more
 * declares, written once as `<Union>Fields` for the members to extend: the 23 events' envelope
 * (`position`, `cursor`, `previous_position`, …) was a seventh of the declaration files.
 */
function unionBases(
  model: SdkModel,
): Map<string, { union: string; name: string; lines: string[]; emitted: boolean }> {
  const bases = new Map<
    string,
    { union: string; name: string; lines: string[]; emitted: boolean }
  >();
  for (const union of model.unions) {
    const members = union.members.map((name) => model.models.find((m) => m.name === name));
    const skip = (m: (typeof members)[number]) => !m || m.role === 'input' || bases.has(m.name);
    if (members.length < 3 || members.some(skip)) continue;
    const [first, ...rest] = members.map((m) => m!.fields.map((f) => fieldLine(f, false)));
    const lines = first!.filter((line) => rest.every((other) => other.includes(line)));
    if (lines.length < 2) continue;
    const base = { union: union.name, name: `${union.name}Fields`, lines, emitted: false };
    for (const member of union.members) bases.set(member, base);
  }
  return bases;
}

function emitTypes(model: SdkModel): string {
  let out = `${HEADER}import type { IntegerFilter, ListFilter, RangeFilters, SortInput } from '../list-types';\n\n`;
  for (const enumType of model.enums) {
    out += `${doc(enumType.description)}export type ${enumType.name} = ${enumType.values.map(quote).join(' | ')};\n\n`;
  }
  const bases = unionBases(model);
  for (const base of bases.values()) {
    if (base.emitted) continue;
    base.emitted = true;
    out += `${doc(`The fields every member of \`${base.union}\` has.`)}export interface ${base.name} {\n${base.lines.join('')}}\n\n`;
  }
  for (const m of model.models) {
    const input = m.role === 'input';
    const base = bases.get(m.name);
    const lines = m.fields.map((f) => fieldLine(f, input)).filter((l) => !base?.lines.includes(l));
    out += `${doc(m.description)}export interface ${m.name}${base ? ` extends ${base.name}` : ''} {\n${lines.join('')}}\n\n`;
  }
  for (const union of model.unions) {
    out += `${doc(union.description)}export type ${union.name} =\n${union.members.map((member) => `  | ${member}`).join('\n')};\n\n`;
  }
  const ops = model.resources.flatMap((resource) => resource.operations);
  const shared = sharedListParams(ops);
  if (shared) {
    out += `${doc('The parameters every list takes.')}export interface ${SHARED_LIST_QUERY} {\n${shared.map(paramLine).join('')}}\n\n`;
  }
  for (const op of ops) {
    if (op.query.length > 0) out += `${queryType(op, shared)}\n`;
  }
  return out;
}

/** What a method's first argument is: the query alone, or `{ params, query, body, … }`. */
function argsType(op: Operation): { type: string; required: boolean } {
  const parts: string[] = [];
  let required = false;
  if (op.pathParams.length > 0) {
    parts.push(`params: { ${op.pathParams.map((p) => `${key(p)}: string`).join('; ')} }`);
    required = true;
  }
  if (op.query.length > 0) {
    const queryRequired = op.query.some((q) => q.required);
    parts.push(`query${queryRequired ? '' : '?'}: ${queryTypeName(op)}`);
    required ||= queryRequired;
  }
  if (op.body) {
    parts.push(`body${op.body.required ? '' : '?'}: ${op.body.model}`);
    required ||= op.body.required;
  }
  if (op.upload) {
    parts.push('body: UploadBody');
    required = true;
  }
  return { type: `{ ${parts.join('; ')}${parts.length ? '; ' : ''}} & CallArgs`, required };
}

const responseType = (op: Operation): string =>
  op.response.kind === 'none' ? (op.response.file ? 'string' : 'undefined') : op.response.model;

const isQueryOnly = (op: Operation): boolean =>
  op.pathParams.length === 0 && !op.body && !op.upload && op.query.length > 0;

/** What a method's args are after a positional id: the args without `params`. */
function restArgsType(op: Operation): { type: string; required: boolean } {
  return argsType({ ...op, pathParams: [] });
}

function methodSignatures(op: Operation): string {
  const item = op.response.kind === 'page' ? op.response.item : undefined;
  const isPage = item !== undefined;
  const result = isPage
    ? `PagePromise<${responseType(op)}, ${item}>`
    : `PlatformPromise<${responseType(op)}>`;
  const summary = withDeprecation(
    [op.summary, op.description, op.scope ? `Scope: \`${op.scope}\`.` : undefined]
      .filter(Boolean)
      .join('\n\n'),
    op.deprecated,
  );
  const name = op.method.camel;
  const args = argsType(op);
  const items = `AsyncIterableIterator<${item}>`;
  let out = doc(summary, '  ');
  if (isQueryOnly(op)) {
    const q = queryTypeName(op);
    const opt = args.required ? '' : '?';
    out += `  ${name}(query${opt}: ${q}, options?: RequestOptions): ${result};\n`;
    out += `  ${name}(args${opt}: ${args.type}, options?: RequestOptions): ${result};\n`;
  } else {
    out += `  ${name}(args${args.required ? '' : '?'}: ${args.type}, options?: RequestOptions): ${result};\n`;
  }
  // `retrieve('stu_…')`: the one path parameter first, the rest of the args after it.
  const positional = op.pathParams.length === 1;
  const rest = restArgsType(op);
  const restParam = `args${rest.required ? '' : '?'}: ${rest.type}`;
  if (positional) {
    out += `  ${name}(${key(op.pathParams[0]!)}: string, ${restParam}, options?: RequestOptions): ${result};\n`;
  }
  if (isPage) {
    out += doc(
      `Every item of \`${op.resource.camel}.${op.method.camel}\`, page after page (one request per page); the same as \`for await\` over \`${name}(…)\`.`,
      '  ',
    );
    out += isQueryOnly(op)
      ? `  ${name}All(query?: ${queryTypeName(op)}): ${items};\n`
      : `  ${name}All(args: ${args.type}): ${items};\n`;
    if (positional)
      out += `  ${name}All(${key(op.pathParams[0]!)}: string, ${restParam}): ${items};\n`;
  }
  if (op.feed) {
    const followed = op.aliasOf ?? `${op.resource.camel}.${op.method.camel}`;
    const replacement = `${followed.split('.')[0]!}.follow`;
    out += doc(
      withDeprecation(
        `Every change after \`after\` (a cursor, or \`'oldest'\`), oldest first, read through \`${followed}\`: long-polls when caught up and resumes from \`follower.cursor\` (save it after applying a change). Retries a lost connection, a 5xx or a 429 with backoff for as long as it takes (or \`giveUpAfter\`). Ends on \`signal\`, or once caught up with \`untilCaughtUp\`.`,
        op.aliasOf ? { replacement: `\`${replacement}\`` } : undefined,
      ),
      '  ',
    );
    out += `  follow(options: FollowOptions): FeedFollower<${op.feed.item}>;\n`;
  }
  return out;
}

function emitRoutes(model: SdkModel): string {
  const models = new Set<string>();
  for (const op of model.resources.flatMap((resource) => resource.operations)) {
    if (op.body) models.add(op.body.model);
    if (op.response.kind !== 'none') models.add(op.response.model);
    if (op.response.kind === 'page') models.add(op.response.item);
    if (op.feed) models.add(op.feed.item);
    if (op.query.length > 0) models.add(queryTypeName(op));
  }
  let out = `${HEADER}`;
  out += `import type { PagePromise, PlatformPromise } from '../api-promise';\n`;
  if (model.operations.some((op) => op.feed))
    out += `import type { FeedFollower, FollowOptions } from '../feed';\n`;
  out += `import type { CallArgs, GenericRequest, RequestOptions, RouteTable${model.resources.some((r) => r.operations.some((o) => o.upload)) ? ', UploadBody' : ''} } from '../route-types';\n`;
  out += `import type {\n${[...models]
    .sort()
    .map((name) => `  ${name},\n`)
    .join('')}} from './types';\n\n`;
  const version = /^\/(v\d+)\//.exec(model.operations[0]!.path)?.[1] ?? 'v1';
  out += `/** The API version in every path. */\nexport const API_VERSION = ${quote(version)};\n\n`;
  const perPage = model.operations
    .flatMap((op) => op.query)
    .find((param) => param.name === 'per_page')?.maximum;
  out += `/** The largest page the API serves (auto-pagination asks for it). */\nexport const MAX_PER_PAGE = ${perPage ?? 100};\n\n`;

  out += '/** Every operation: how to call it. The client is built from this table. */\n';
  out += 'export const ROUTES = {\n';
  for (const resource of model.resources) {
    out += `  ${key(resource.camel)}: {\n`;
    for (const op of resource.operations) {
      const parts = [`method: ${quote(op.http)}`, `path: ${quote(op.path)}`];
      if (op.query.length > 0) {
        const names = op.query.flatMap((q) =>
          q.kind === 'range' ? (q.operators ?? []).map((o) => `${q.name}[${o}]`) : [q.name],
        );
        parts.push(`query: [${names.map(quote).join(', ')}]`);
      }
      if (op.body) parts.push('body: true');
      if (op.upload) parts.push('body: true', 'upload: true');
      if (op.response.kind === 'page') parts.push('list: true');
      if (op.feed) parts.push('feed: true');
      out += `    ${key(op.method.camel)}: { ${parts.join(', ')} },\n`;
    }
    out += '  },\n';
  }
  out += '} as const satisfies RouteTable;\n\n';

  for (const resource of model.resources) {
    out += `${doc(`\`client.${resource.camel}\`.`)}export interface ${resource.pascal}Resource {\n`;
    out += resource.operations.map(methodSignatures).join('');
    out += '}\n\n';
  }
  out +=
    '/** The Platform API: one namespace per resource, and `request()` for any path. */\nexport interface PlatformClient extends GenericRequest {\n';
  for (const resource of model.resources) {
    out += `  ${key(resource.camel)}: ${resource.pascal}Resource;\n`;
  }
  return `${out}}\n`;
}

/**
 * One field of an event shape: `name type[?][|]`. Types: `s` string, `i` integer, `n` number,
 * `b` boolean, `u` anything, `p:stu` an id with that prefix, `l:value` a literal, `e:Name` an enum,
 * `m:Name` a model, `a:<type>` an array, `r:<type>` a map; `?` optional, `|` nullable.
 */
function shapeType(type: TypeRef): string {
  switch (type.kind) {
    case 'string':
      return type.prefix ? `p:${type.prefix}` : 's';
    case 'integer':
      return 'i';
    case 'number':
      return 'n';
    case 'boolean':
      return 'b';
    case 'unknown':
      return 'u';
    case 'literal':
      return `l:${type.value}`;
    case 'enum':
      return `e:${type.name}`;
    case 'model':
      return `m:${type.name}`;
    case 'union':
      throw new Error(`An event field cannot be the union ${type.name}`);
    case 'array':
      return `a:${shapeType(type.items)}`;
    case 'map':
      return `r:${shapeType(type.values)}`;
  }
}

const shapeField = (f: Field): string =>
  `${f.name} ${shapeType(f.type)}${f.required ? '' : '?'}${f.nullable ? '|' : ''}`;

function emitEventShapes(model: SdkModel): string {
  const byName = new Map(model.models.map((m) => [m.name, m]));
  const needed = new Map<string, Model>();
  const enums = new Set<string>();
  const visit = (type: TypeRef): void => {
    if (type.kind === 'model' && !needed.has(type.name)) {
      const m = byName.get(type.name)!;
      needed.set(type.name, m);
      m.fields.forEach((f) => visit(f.type));
    }
    if (type.kind === 'enum') enums.add(type.name);
    if (type.kind === 'array') visit(type.items);
    if (type.kind === 'map') visit(type.values);
  };
  // Every event is the same envelope around its own `type` and `data`: one envelope shape. An
  // update event's `previous_attributes` (a partial of its `data`) is left to the types: the
  // verifier, forward compatible, accepts fields it does not check.
  const envelopes = model.events.map((event) =>
    byName
      .get(event.model)!
      .fields.filter((f) => !['type', 'data', 'previous_attributes'].includes(f.name))
      .map(shapeField),
  );
  const envelope = envelopes[0] ?? [];
  if (envelopes.some((fields) => fields.join() !== envelope.join()))
    throw new Error('Events differ in more than type and data: extend the event shapes');
  for (const event of model.events) visit({ kind: 'model', name: event.data });

  let out = `${HEADER}`;
  out += `/** Every event type this SDK knows, and the model of its \`data\`. */\n`;
  out += `export const EVENT_DATA: Readonly<Record<string, string>> = {\n`;
  out += model.events.map((e) => `  ${quote(e.type)}: ${quote(e.data)},\n`).join('');
  out += '};\n\n';
  out += '/** The fields of every event besides `type` and `data`. */\n';
  out += `export const EVENT_ENVELOPE: readonly string[] = [${envelope.map(quote).join(', ')}];\n\n`;
  out += '/** The models events carry, field by field (see `src/event-shape.ts`). */\n';
  out += 'export const EVENT_SHAPES: Readonly<Record<string, readonly string[]>> = {\n';
  for (const m of needed.values()) {
    out += `  ${m.name}: [${m.fields.map(shapeField).map(quote).join(', ')}],\n`;
  }
  out += '};\n\n';
  out += 'export const EVENT_ENUMS: Readonly<Record<string, readonly string[]>> = {\n';
  for (const e of model.enums.filter((e) => enums.has(e.name))) {
    out += `  ${e.name}: [${e.values.map(quote).join(', ')}],\n`;
  }
  return `${out}};\n`;
}

/** The enums whose values the SDK also exports at runtime, each as `<CONSTANT_CASE>S`. */
const RUNTIME_ENUMS = ['ExportCollection'];

function emitConstants(model: SdkModel): string {
  let out = `${HEADER}import type * as G from './types';\n`;
  for (const name of RUNTIME_ENUMS) {
    const found = model.enums.find((e) => e.name === name);
    if (!found) throw new Error(`No enum ${name} in the model: update RUNTIME_ENUMS`);
    const constant = `${name.replace(/(?<=[a-z])(?=[A-Z])/g, '_').toUpperCase()}S`;
    out += `\n/** Every \`${name}\`, in the contract's order. */\n`;
    out += `export const ${constant}: readonly G.${name}[] = [${found.values.map(quote).join(', ')}];\n`;
  }
  return out;
}

export function emitTypeScript(model: SdkModel): Map<string, string> {
  return new Map([
    [`${TS_ROOT}/types.ts`, emitTypes(model)],
    [`${TS_ROOT}/routes.ts`, emitRoutes(model)],
    [`${TS_ROOT}/event-shapes.ts`, emitEventShapes(model)],
    [`${TS_ROOT}/constants.ts`, emitConstants(model)],
    [`${TS_ROOT}/contract-equivalence.test-d.ts`, emitEquivalence(model)],
  ]);
}
