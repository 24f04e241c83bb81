/** `resources/`: one resource class (sync and async, each with its raw twin) per namespace. */
import {
  type Context,
  HEADER,
  docstring,
  inputType,
  literalType,
  nullable,
  pyLiteral,
  pyString,
  rangeName,
  snake,
} from './python-source';
import type { Operation, QueryParam, Resource } from './model';
import { deprecationText } from './deprecation';
import { importBlock, used } from './python-models';
import { HELPER_BASES, type ResourceMethods, resourceClasses } from './python-resource-classes';

// --- resources ---------------------------------------------------------------------------------

interface Argument {
  /** The Python keyword. */
  arg: string;
  /** The JSON / query name. */
  wire: string;
  annotation: string;
  required: boolean;
  description?: string;
  where: 'path' | 'query' | 'body' | 'file';
}

function operationArguments(ctx: Context, op: Operation): Argument[] {
  const args: Argument[] = [];
  for (const name of op.pathParams) {
    args.push({
      arg: ctx.argName(name),
      wire: name,
      annotation: 'str',
      required: true,
      where: 'path',
    });
  }
  for (const q of op.query) {
    args.push({
      arg: ctx.argName(q.name),
      wire: q.name,
      // A feed's cursor is what the feed returns (an opaque str), '0' (or int 0) or 'oldest'.
      annotation:
        op.feed && (q.name === 'after' || q.name === 'until')
          ? '_t.Union[str, int]'
          : queryType(ctx, q),
      required: q.required,
      ...(q.description !== undefined && { description: q.description }),
      where: 'query',
    });
  }
  if (op.body) {
    for (const f of ctx.model(op.body.model).fields) {
      const description = [
        f.description,
        f.default !== undefined
          ? `Default (when not given): \`${pyLiteral(f.default)}\`.`
          : undefined,
      ]
        .filter(Boolean)
        .join(' ');
      args.push({
        arg: ctx.argName(f.name),
        wire: f.name,
        annotation: nullable(inputType(ctx, f.type), f.nullable),
        required: f.required,
        ...(description && { description }),
        where: 'body',
      });
    }
  }
  if (op.upload) {
    args.push({
      arg: 'file',
      wire: 'file',
      annotation: 'FileInput',
      required: true,
      description:
        'The file: its bytes, an open binary file, a path (`pathlib.Path("students.csv")`) or a `(filename, content)` pair. Its format is `format`, else its name\'s extension.',
      where: 'file',
    });
  }
  const seen = new Set<string>();
  for (const a of args) {
    if (seen.has(a.arg)) throw new Error(`Python: ${op.id} has two arguments named '${a.arg}'`);
    seen.add(a.arg);
  }
  return args;
}

function queryType(ctx: Context, q: QueryParam): string {
  if (q.kind === 'range') return rangeName(q.type);
  if (q.enumValues?.length) {
    const named = ctx.sdk.enums.find(
      (e) =>
        e.values.length === q.enumValues!.length &&
        e.values.every((v, i) => v === q.enumValues![i]),
    );
    const literal = named ? named.name : literalType(q.enumValues);
    // Several values (IN) are given as a list and sent comma-separated.
    return `_t.Union[${literal}, _t.Sequence[${literal}]]`;
  }
  return inputType(ctx, q.type);
}

function signature(args: Argument[], returns: string): string {
  const positional = args.filter((a) => a.where === 'path');
  const keyword = [
    ...args.filter((a) => a.where !== 'path' && a.required),
    ...args.filter((a) => a.where !== 'path' && !a.required),
  ];
  let out = '        self,\n';
  for (const a of positional) out += `        ${a.arg}: ${a.annotation},\n`;
  out += '        *,\n';
  for (const a of keyword) {
    out += a.required
      ? `        ${a.arg}: ${a.annotation},\n`
      : `        ${a.arg}: ${withOmit(a.annotation)} = omit,\n`;
  }
  out += '        request_options: _t.Optional[RequestOptions] = None,\n';
  return `(\n${out}    ) -> ${returns}:\n`;
}

/** `Union[X, Omit]`, flattened when X is itself a `Union[...]`. */
function withOmit(annotation: string): string {
  if (annotation.startsWith('_t.Union[') && annotation.endsWith(']')) {
    const inner = annotation.slice('_t.Union['.length, -1);
    let depth = 0;
    const balanced = [...inner].every((ch) => (depth += ch === '[' ? 1 : ch === ']' ? -1 : 0) >= 0);
    if (balanced && depth === 0) return `_t.Union[${inner}, Omit]`;
  }
  return `_t.Union[${annotation}, Omit]`;
}

function methodDoc(op: Operation, args: Argument[], raw: boolean): string {
  let text = op.summary.trim();
  if (!text.endsWith('.')) text += '.';
  text += `\n\n\`${op.http} ${op.path}\``;
  if (op.scope) text += ` (scope \`${op.scope}\`)`;
  text += '.';
  if (op.description) text += `\n\n${op.description.trim()}`;
  // Sphinx's directive: documentation tools render it as a warning box.
  if (op.deprecated) {
    text += `\n\n.. deprecated:: ${op.deprecated.since ?? ''}\n    This operation is deprecated ${deprecationText(op.deprecated)}`;
  }
  if (raw) {
    text +=
      '\n\nReturns the raw `APIResponse`: `status_code`, `headers`, `request_id`, and `parse()`.';
  } else if (op.response.kind === 'page') {
    text += '\n\nReturns the first page; iterating it walks every item of every page.';
  }
  const documented = args.filter((a) => a.description);
  if (documented.length) {
    text += '\n\nArgs:\n';
    text += documented
      .map((a) => `    ${a.arg}: ${a.description!.replace(/\s*\n\s*/g, ' ')}`)
      .join('\n');
  }
  return docstring(text, '        ');
}

function returnType(ctx: Context, op: Operation, page = 'SyncPage'): string {
  switch (op.response.kind) {
    case 'model':
      return ctx.unions.has(op.response.model)
        ? op.response.model
        : ctx.model(op.response.model).name;
    case 'page':
      return `${page}[${op.response.item}]`;
    case 'none':
      return op.response.file ? 'str' : 'None';
  }
}

function pathExpr(ctx: Context, op: Operation): string {
  let hasParam = false;
  const path = op.path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    hasParam = true;
    return `{path_param('${name}', ${ctx.argName(name)})}`;
  });
  return hasParam ? `f${pyString(path)}` : pyString(path);
}

/**
 * A namespace's class name: `Students`; `OrganizationResource` where the plain name is a model's
 * (`client.organization` returns an `Organization`), since one module imports both.
 */
function resourceClass(ctx: Context, resource: Resource): string {
  const taken = ctx.sdk.models.some((m) => m.name === resource.pascal);
  return taken ? `${resource.pascal}Resource` : resource.pascal;
}

/** What a resource module's methods use, and so what it imports. */
interface ResourceUses {
  models: Set<string>;
  unions: Set<string>;
  params: Set<string>;
  enums: Set<string>;
  page: boolean;
  feed: boolean;
  path: boolean;
  dt: boolean;
  upload: boolean;
}

/** Records the types and helpers an operation's arguments and response need imported. */
function noteUses(ctx: Context, uses: ResourceUses, op: Operation, args: Argument[]): void {
  for (const a of args) {
    for (const token of a.annotation.match(/[A-Za-z_][A-Za-z0-9_]*/g) ?? []) {
      if (ctx.enums.has(token)) uses.enums.add(token);
      else if (token.endsWith('Params') || token.endsWith('Range')) uses.params.add(token);
    }
    if (a.annotation.includes('_dt.')) uses.dt = true;
    if (a.where === 'path') uses.path = true;
    if (a.where === 'file') uses.upload = true;
  }
  if (op.response.kind === 'page') {
    uses.page = true;
    (ctx.unions.has(op.response.item) ? uses.unions : uses.models).add(op.response.item);
  } else if (op.response.kind === 'model') {
    (ctx.unions.has(op.response.model) ? uses.unions : uses.models).add(op.response.model);
  }
}

/** The plain methods of an operation (sync and async): the raw method's response, parsed. */
function plainMethods(ctx: Context, op: Operation, args: Argument[], methods: ResourceMethods) {
  const callArgs = args.map((a) => (a.where === 'path' ? a.arg : `${a.arg}=${a.arg}`));
  callArgs.push('request_options=request_options');
  const name = op.method.snake;
  const forwarded = callArgs.map((c) => `            ${c},\n`).join('');
  methods.plain += `\n    def ${name}${signature(args, returnType(ctx, op))}${methodDoc(op, args, false)}`;
  methods.plain += `        return self.with_raw_response.${name}(\n${forwarded}        ).parse()\n`;
  const asyncResult = returnType(ctx, op, 'AsyncPage');
  methods.asyncPlain += `\n    async def ${name}${signature(args, asyncResult)}${methodDoc(op, args, false)}`;
  methods.asyncPlain += `        response = await self.with_raw_response.${name}(\n${forwarded}        )\n        return response.parse()\n`;
}

/** `follow` (sync and async) for an operation with a change feed: reads it through that operation. */
function followMethods(
  ctx: Context,
  op: Operation,
  feed: NonNullable<Operation['feed']>,
  args: Argument[],
  methods: ResourceMethods,
) {
  const name = op.method.snake;
  const result = returnType(ctx, op);
  const forward = (asyncCall: boolean) =>
    args
      .filter((a) => a.where === 'query')
      .map((a) =>
        a.wire === 'after'
          ? 'after=cursor'
          : a.wire === 'wait'
            ? 'wait=follower.wait(wait)'
            : `${a.arg}=${a.arg}`,
      )
      // The follower retries itself, for as long as it takes: the client's retries would only
      // delay (and miscount) its backoff.
      .concat(['request_options={**(request_options or {}), "max_retries": 0}'])
      .join(', ')
      .replace(/^/, asyncCall ? `await self.${name}(` : `self.${name}(`);
  const followArgs = (follower: string) =>
    signature(args, `${follower}[${feed.item}]`).replace(
      '        request_options:',
      '        until_caught_up: bool = False,\n        max_retry_delay: float = 10.0,\n        give_up_after: _t.Optional[float] = None,\n        on_retry: _t.Optional[OnRetry] = None,\n        request_options:',
    );
  const followDoc = docstring(
    `Every change after \`after\`, oldest first, read through \`${name}\`.

Iterating reads page after page and, once caught up, long-polls for the next change. \`follower.cursor\` is where to resume (save it after applying a change). With \`until_caught_up=True\` iteration ends once a read finds nothing new.

A read that fails for a reason that may pass (no connection, a timeout, a 5xx, a 429) is retried from the same cursor for as long as it takes: capped exponential backoff with jitter, or the server's \`Retry-After\` (at most 60 s). Any other error is raised: a 410 \`cursor_expired\` as \`CursorExpiredError\` (start again from an export).

Args:
    after: Required. The cursor to start after: an export's \`cursor\`, a saved \`follower.cursor\`, an event's \`cursor\` (opaque strs bound to the organization; a position is not one), \`'0'\` for the start, or \`'oldest'\` for the oldest change still kept.
    max_retry_delay: Longest backoff between two failed reads, in seconds.
    give_up_after: Seconds of continuous failure after which the last error is raised; None: never give up.
    on_retry: \`on_retry(error, attempt, delay_seconds)\`, called before each wait; \`attempt\` counts 1, 2, 3, … from the last successful read.
    until: Stop once the follower's cursor reaches this cursor (a reconciliation's end), instead of reading on.${
      op.aliasOf
        ? `\n\n.. deprecated::\n    Use \`${op.aliasOf.split('.')[0]!}.follow\` instead; this alias will be removed.`
        : ''
    }`,
    '        ',
  );
  const options = (follower: string) =>
    `        follower: ${follower}[${feed.item}] = ${follower}(
            read,
            after=follow_start(after),
            until=None if isinstance(until, Omit) else feed_cursor("until", until),
            until_caught_up=until_caught_up,
            max_retry_delay=max_retry_delay,
            give_up_after=give_up_after,
            on_retry=on_retry,
            sleep=self._sleep,
        )
        return follower\n`;
  methods.plain += `\n    def follow${followArgs('SyncFeedFollower')}${followDoc}`;
  methods.plain += `        def read(cursor: str) -> ${result}:\n            return ${forward(false)})\n\n`;
  methods.plain += options('SyncFeedFollower');
  methods.asyncPlain += `\n    def follow${followArgs('AsyncFeedFollower')}${followDoc}`;
  methods.asyncPlain += `        async def read(cursor: str) -> ${result}:\n            return ${forward(true)})\n\n`;
  methods.asyncPlain += options('AsyncFeedFollower');
}

/** The raw methods of an operation (sync and async): the request, returning the `APIResponse`. */
function rawMethods(ctx: Context, op: Operation, args: Argument[], methods: ResourceMethods) {
  const name = op.method.snake;
  const rawHead = `${signature(args, `APIResponse[${returnType(ctx, op)}]`)}${methodDoc(op, args, true)}`;
  const asyncRawHead = `${signature(args, `APIResponse[${returnType(ctx, op, 'AsyncPage')}]`)}${methodDoc(op, args, true)}`;
  const query = args.filter((a) => a.where === 'query');
  const body = args.filter((a) => a.where === 'body');
  // A feed's cursors are checked before sending (`feed_cursor_param`): an int is sent as its digits.
  const value = (a: Argument) =>
    op.feed && a.where === 'query' && (a.wire === 'after' || a.wire === 'until')
      ? `feed_cursor_param(${pyString(a.arg)}, ${a.arg})`
      : a.arg;
  const dict = (items: Argument[]) =>
    `{\n${items.map((a) => `                ${pyString(a.wire)}: ${value(a)},\n`).join('')}            }`;
  let rawBody = '';
  if (op.response.kind === 'page') {
    if (op.http !== 'GET' || body.length)
      throw new Error(`Python: list ${op.id} must be a GET without body`);
    rawBody += `        return self._request_page(\n            ${pathExpr(ctx, op)},\n`;
    rawBody += `            query=${dict(query)},\n`;
    rawBody += `            options=request_options,\n            item=${ctx.parser(op.response.item)},\n        )\n`;
  } else {
    rawBody += `        return self._request(\n            ${pyString(op.http)},\n            ${pathExpr(ctx, op)},\n`;
    if (query.length) rawBody += `            query=${dict(query)},\n`;
    if (body.length) rawBody += `            body=${dict(body)},\n`;
    const format = query.find((a) => a.wire === 'format');
    if (op.upload)
      rawBody += `            body=Upload(file, format=${format ? format.arg : 'None'}),\n`;
    rawBody += `            options=request_options,\n`;
    rawBody += `            cast=${op.response.kind === 'none' ? (op.response.file ? 'parse_file' : 'parse_none') : ctx.parser(op.response.model)},\n        )\n`;
  }
  methods.raw += `\n    def ${name}${rawHead}${rawBody}`;
  // The async twin: the same body, awaited.
  methods.asyncRaw += `\n    async def ${name}${asyncRawHead}${rawBody.replace(/^ {8}return self\./m, '        return await self.')}`;
}

/** The module's docstring and imports: only what its methods use. */
function resourceImports(resource: Resource, uses: ResourceUses, methods: ResourceMethods): string {
  const usesNone = resource.operations.some(
    (op) => op.response.kind === 'none' && !op.response.file,
  );
  const usesFile = resource.operations.some(
    (op) => op.response.kind === 'none' && op.response.file,
  );
  const modelImports = [...uses.models].filter((name) => !uses.unions.has(name)).sort();
  const unionImports = [...uses.unions].sort().flatMap((u) => [u, `parse_${snake(u)}`]);
  const core = [
    'AsyncAPIResource',
    'SyncAPIResource',
    'cached_property',
    ...(uses.path ? ['path_param'] : []),
    ...(usesNone ? ['parse_none'] : []),
    ...(usesFile ? ['parse_file'] : []),
  ];
  const classes = `${methods.plain}${methods.raw}`;
  let out = `${HEADER}"""\`client.${resource.snake}\`: ${resource.operations.map((o) => o.method.snake).join(', ')}."""

from __future__ import annotations

${uses.dt ? 'import datetime as _dt\n' : ''}import typing as _t

${uses.feed ? 'from .._core._feed import AsyncFeedFollower, OnRetry, SyncFeedFollower, feed_cursor, feed_cursor_param, follow_start\n' : ''}${uses.page ? 'from .._core._pagination import AsyncPage, SyncPage\n' : ''}from .._core._resource import ${core.join(', ')}
from .._core._response import APIResponse
${uses.upload ? 'from .._core._upload import FileInput, Upload\n' : ''}${importBlock('.._types', used(classes, ['Omit', 'RequestOptions', 'omit']))}`;
  const helpers = HELPER_BASES[resource.snake];
  if (helpers) out += `from ${helpers.module} import ${helpers.async}, ${helpers.sync}\n`;
  if (uses.enums.size) out += `from ..types.enums import ${[...uses.enums].sort().join(', ')}\n`;
  if (modelImports.length || unionImports.length) {
    out += `from ..types.models import ${[...modelImports, ...unionImports].join(', ')}\n`;
  }
  if (uses.params.size) out += `from ..types.params import ${[...uses.params].sort().join(', ')}\n`;
  return out;
}

export function emitResource(ctx: Context, resource: Resource): string {
  const uses: ResourceUses = {
    models: new Set(),
    unions: new Set(),
    params: new Set(),
    enums: new Set(),
    page: false,
    feed: false,
    path: false,
    dt: false,
    upload: false,
  };
  const methods: ResourceMethods = { plain: '', raw: '', asyncPlain: '', asyncRaw: '' };
  for (const op of resource.operations) {
    const args = operationArguments(ctx, op);
    noteUses(ctx, uses, op, args);
    plainMethods(ctx, op, args, methods);
    if (op.feed) {
      uses.feed = true;
      // Only its name, for the follower's type: the page's parser reads the items.
      uses.models.add(op.feed.item);
      followMethods(ctx, op, op.feed, args, methods);
    }
    rawMethods(ctx, op, args, methods);
  }
  return (
    resourceImports(resource, uses, methods) +
    resourceClasses(resourceClass(ctx, resource), resource, methods)
  );
}

export function emitResourcesInit(ctx: Context): string {
  const resources = ctx.sdk.resources;
  let out = `${HEADER}"""The API's resource namespaces, as properties of \`PlatformClient\`."""

from __future__ import annotations

import typing as _t

from .._core._resource import cached_property
`;
  const cls = (r: Resource) => resourceClass(ctx, r);
  const names = (r: Resource) => [
    cls(r),
    `${cls(r)}WithRawResponse`,
    `Async${cls(r)}`,
    `Async${cls(r)}WithRawResponse`,
  ];
  for (const r of resources) out += `from .${r.snake} import ${names(r).join(', ')}\n`;
  out += `
if _t.TYPE_CHECKING:
    from .._async_client import AsyncPlatformClient
    from .._client import PlatformClient

__all__ = [
    "ClientResources",
    "AsyncClientResources",
${resources.flatMap((r) => names(r).map((n) => `    ${pyString(n)},`)).join('\n')}
]


class ClientResources:
    """Mixed into \`PlatformClient\`: one lazily created namespace per resource."""
`;
  for (const r of resources) {
    const paths = [...new Set(r.operations.map((o) => o.path.split('/').slice(0, 3).join('/')))];
    out += `\n    @cached_property\n    def ${r.snake}(self) -> ${cls(r)}:\n`;
    out += `        """${r.operations.map((o) => `\`${o.method.snake}\``).join(', ')} (${paths.map((p) => `\`${p}\``).join(', ')})."""\n`;
    out += `        return ${cls(r)}(_t.cast("PlatformClient", self))\n`;
  }
  out += `

class AsyncClientResources:
    """Mixed into \`AsyncPlatformClient\`: the same namespaces, with coroutine methods."""
`;
  for (const r of resources) {
    out += `\n    @cached_property\n    def ${r.snake}(self) -> Async${cls(r)}:\n`;
    out += `        """${r.operations.map((o) => `\`${o.method.snake}\``).join(', ')}, awaited."""\n`;
    out += `        return Async${cls(r)}(_t.cast("AsyncPlatformClient", self))\n`;
  }
  return out;
}
