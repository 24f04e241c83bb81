/** `types/`: the enums, models, params TypedDicts and the package's `__init__.py`. */
import {
  type Context,
  HEADER,
  RANGE_OPERATORS,
  docstring,
  inputType,
  isIdentifier,
  literalType,
  nullable,
  outputType,
  paramsName,
  parseExpr,
  pyLiteral,
  pyString,
  snake,
} from './python-source';
import type { Field, Model, TypeRef, UnionType } from './model';

// --- types/enums.py ----------------------------------------------------------------------------

export function emitEnums(ctx: Context): string {
  let out = `${HEADER}"""The API's enums as \`Literal\`s: what you may send. Values the API returns are typed
\`<Enum> | str\`, so a value added by a newer server arrives as a plain string instead of failing."""

from __future__ import annotations

import typing as _t

__all__ = [${ctx.sdk.enums.map((e) => pyString(e.name)).join(', ')}]
`;
  for (const e of ctx.sdk.enums) {
    out += `\n${e.name} = ${literalType(e.values)}\n`;
    out += docstring(e.description, '');
  }
  return out;
}

// --- types/models.py ---------------------------------------------------------------------------

export function emitModels(ctx: Context): string {
  const outputModels = ctx.sdk.models.filter((m) => m.role !== 'input');
  const unions = ctx.sdk.unions ?? [];
  const names = [
    ...outputModels.map((m) => m.name),
    ...unions.flatMap((u) => [u.name, `Unknown${u.name}`, `parse_${snake(u.name)}`]),
  ];
  let body = '';
  for (const m of outputModels) body += `\n\n${emitModelClass(ctx, m)}`;
  for (const u of unions) body += `\n\n${emitUnion(ctx, u)}`;
  const helpers = used(body, [
    'BaseModel',
    'as_dict',
    'json_get',
    'parse_date',
    'parse_datetime',
    'parse_list',
    'parse_map',
    'parse_model',
  ]);
  const enums = used(body, [...ctx.enums.keys()]);
  return `${HEADER}"""The API's objects as it returns them: frozen models with typed attributes.

\`Model.from_json(data)\` never validates: unknown keys are kept (\`to_dict()\` returns exactly what
the API sent, \`model_extra\` the keys this SDK version does not know), and a value of an
unexpected shape is kept as it came."""

from __future__ import annotations

${body.includes('_dt.') ? 'import datetime as _dt\n' : ''}import typing as _t

${importBlock('.._models', helpers)}${importBlock('.enums', enums)}
__all__ = [
${names.map((n) => `    ${pyString(n)},`).join('\n')}
]
${body}`;
}

/** The candidates that appear as whole words in `body`. */
export function used(body: string, candidates: readonly string[]): string[] {
  return candidates.filter((name) =>
    new RegExp(`(?<![A-Za-z0-9_.])${name}(?![A-Za-z0-9_])`).test(body),
  );
}

export function importBlock(from: string, names: readonly string[]): string {
  if (names.length === 0) return '';
  const sorted = [...names].sort();
  const line = `from ${from} import ${sorted.join(', ')}\n`;
  if (line.length <= 100) return line;
  return `from ${from} import (\n${sorted.map((n) => `    ${n},\n`).join('')})\n`;
}

interface PyField {
  attr: string;
  json: string;
  annotation: string;
  required: boolean;
  parse: string;
  description?: string;
}

function modelFields(ctx: Context, m: Model): PyField[] {
  const seen = new Set<string>();
  return m.fields.map((f) => {
    const attr = ctx.attrName(f.name);
    if (seen.has(attr)) throw new Error(`Python: ${m.name} has two fields named '${attr}'`);
    seen.add(attr);
    const annotation = nullable(outputType(ctx, f.type), f.nullable || !f.required);
    return {
      attr,
      json: f.name,
      annotation,
      required: f.required,
      parse: parseExpr(ctx, f.type, `json_get(raw, ${pyString(f.name)})`),
      ...(f.description !== undefined && { description: f.description }),
    };
  });
}

function emitModelClass(ctx: Context, m: Model, fieldsOverride?: PyField[]): string {
  const fields = fieldsOverride ?? modelFields(ctx, m);
  let out = `class ${m.name}(BaseModel):\n`;
  out += docstring(m.description ?? `A \`${m.name}\` object of the Platform API.`, '    ');
  out += '\n';
  for (const f of fields) {
    out += `    ${f.attr}: ${f.annotation}\n`;
    out += docstring(f.description, '    ');
  }
  out += `\n    _FIELDS: _t.ClassVar[_t.Tuple[_t.Tuple[str, str], ...]] = (\n`;
  for (const f of fields) out += `        (${pyString(f.attr)}, ${pyString(f.json)}),\n`;
  out += `    )\n\n`;
  // Required keys first, then the ones the API may leave out (default None).
  const ordered = [...fields.filter((f) => f.required), ...fields.filter((f) => !f.required)];
  if (ordered.length === 0) {
    out += `    def __init__(self) -> None:\n        self._init({})\n\n`;
  } else {
    out += `    def __init__(\n        self,\n        *,\n`;
    for (const f of ordered) {
      out += `        ${f.attr}: ${f.annotation}${f.required ? '' : ' = None'},\n`;
    }
    out += `    ) -> None:\n        self._init(\n            {\n`;
    for (const f of fields) out += `                ${pyString(f.attr)}: ${f.attr},\n`;
    out += `            }\n        )\n\n`;
  }
  out += `    @classmethod\n    def from_json(cls, data: _t.Any) -> ${m.name}:\n`;
  out += `        """A \`${m.name}\` from parsed JSON; never raises on unexpected data."""\n`;
  out += `        raw = as_dict(data)\n`;
  if (fields.length === 0) {
    out += `        model = cls()\n`;
  } else {
    out += `        model = cls(\n`;
    for (const f of fields) out += `            ${f.attr}=${f.parse},\n`;
    out += `        )\n`;
  }
  out += `        model._attach(raw)\n        return model\n`;
  return out;
}

/** `Event = Union[...]`, its `UnknownEvent` fallback and `parse_event`. */
function emitUnion(ctx: Context, u: UnionType): string {
  const members = u.members.map((name) => ctx.model(name));
  const disc = u.discriminator;
  const unknown = `Unknown${u.name}`;
  // The fallback keeps the fields every member has; where their types differ, `Any`.
  const common: PyField[] = [];
  for (const f of members[0]?.fields ?? []) {
    const all = members.map((m) => m.fields.find((x) => x.name === f.name));
    if (all.some((x) => x === undefined)) continue;
    const same = all.every((x) => JSON.stringify(x!.type) === JSON.stringify(f.type));
    const type: TypeRef =
      f.name === disc ? { kind: 'string' } : same ? f.type : { kind: 'unknown' };
    const required = all.every((x) => x!.required);
    const isNullable = all.some((x) => x!.nullable);
    common.push({
      attr: ctx.attrName(f.name),
      json: f.name,
      annotation: nullable(outputType(ctx, type), isNullable || !required),
      required,
      parse: parseExpr(ctx, type, `json_get(raw, ${pyString(f.name)})`),
      ...(f.name === disc && {
        description: `The ${disc}, one this SDK version does not know (a newer API's).`,
      }),
    });
  }
  let out = emitModelClass(
    ctx,
    {
      name: unknown,
      role: 'resource',
      fields: [],
      description:
        `A \`${u.name}\` of a kind this SDK version does not know, sent by a newer API: upgrade ` +
        'the SDK to get it typed. `to_dict()` holds everything it carries.',
    },
    common,
  );
  out += `\n\n${u.name} = _t.Union[\n${u.members.map((m) => `    ${m},\n`).join('')}    ${unknown},\n]\n`;
  out += docstring(
    u.description ??
      `One of the ${u.name} kinds${disc ? `, told apart by \`${disc}\`` : ''}; \`${unknown}\` for a kind this SDK does not know.`,
    '',
  );
  const fn = `parse_${snake(u.name)}`;
  if (disc) {
    const table = members.map((m) => {
      const field = m.fields.find((f) => f.name === disc);
      if (field?.type.kind !== 'literal') {
        throw new Error(`Python: ${m.name}.${disc} must be a literal to discriminate ${u.name}`);
      }
      return `    ${pyString(field.type.value)}: ${m.name}.from_json,\n`;
    });
    out += `\n_${snake(u.name).toUpperCase()}_KINDS: _t.Dict[str, _t.Callable[[_t.Any], ${u.name}]] = {\n${table.join('')}}\n`;
    out += `\n\ndef ${fn}(data: _t.Any) -> ${u.name}:\n`;
    out += `    """The \`${u.name}\` member named by \`${disc}\`; \`${unknown}\` for an unknown one."""\n`;
    out += `    raw = as_dict(data)\n    kind = raw.get(${pyString(disc)})\n`;
    out += `    parse = _${snake(u.name).toUpperCase()}_KINDS.get(kind) if isinstance(kind, str) else None\n`;
    out += `    return parse(raw) if parse is not None else ${unknown}.from_json(raw)\n`;
  } else {
    out += `\n\ndef ${fn}(data: _t.Any) -> ${u.name}:\n`;
    out += `    """Without a discriminator the kind cannot be told: the generic \`${unknown}\`."""\n`;
    out += `    return ${unknown}.from_json(data)\n`;
  }
  return out;
}

// --- types/params.py ---------------------------------------------------------------------------

export function emitParams(ctx: Context): string {
  const names = [...ctx.paramModels].map(paramsName);
  const rangeNames = [...ctx.ranges.keys()].sort();
  let body = '';
  for (const name of rangeNames) {
    const valueType = inputType(ctx, ctx.ranges.get(name)!);
    body += `\n\nclass ${name}(_t.TypedDict, total=False):\n`;
    body += `    """A range filter: \`{"gte": ..., "lt": ...}\` is sent as \`name[gte]=...&name[lt]=...\`."""\n\n`;
    for (const op of RANGE_OPERATORS) body += `    ${op}: ${valueType}\n`;
  }
  for (const modelName of ctx.paramModels) {
    body += `\n\n${emitTypedDict(ctx, ctx.model(modelName))}`;
  }
  return `${HEADER}"""What you send: TypedDicts for request bodies and nested inputs, and the range filters.

Written as a required base plus a \`total=False\` subclass, which Python 3.9 understands."""

from __future__ import annotations

${body.includes('_dt.') ? 'import datetime as _dt\n' : ''}import typing as _t

${importBlock('.enums', used(body, [...ctx.enums.keys()]))}
__all__ = [
${[...rangeNames, ...names].map((n) => `    ${pyString(n)},`).join('\n')}
]
${body}`;
}

function emitTypedDict(ctx: Context, m: Model): string {
  const name = paramsName(m.name);
  const entry = (f: Field) => nullable(inputType(ctx, f.type), f.nullable);
  const describe = (f: Field) =>
    [f.description, f.default !== undefined ? `Default: \`${pyLiteral(f.default)}\`.` : undefined]
      .filter(Boolean)
      .join(' ');
  const doc = m.description ?? `The fields of a \`${m.name}\`.`;
  const allIdentifiers = m.fields.every((f) => isIdentifier(f.name));
  const required = m.fields.filter((f) => f.required);
  const optional = m.fields.filter((f) => !f.required);
  if (!allIdentifiers) {
    // Keys that are not identifiers (or are keywords) need the functional form; the class then
    // inherits from both halves (3.9 has no NotRequired).
    const body = (fields: Field[]) =>
      fields.map((f) => `${pyString(f.name)}: ${entry(f)}`).join(', ');
    let out = `_${name}Required = _t.TypedDict(${pyString(`_${name}Required`)}, {${body(required)}})\n`;
    out += `_${name}Optional = _t.TypedDict(${pyString(`_${name}Optional`)}, {${body(optional)}}, total=False)\n\n`;
    out += `\nclass ${name}(_${name}Required, _${name}Optional):\n${docstring(doc, '    ')}`;
    return out.endsWith(':\n') ? `${out}    pass\n` : out;
  }
  const lines = (fields: Field[]) =>
    fields.map((f) => `    ${f.name}: ${entry(f)}\n${docstring(describe(f), '    ')}`).join('');
  if (required.length === 0 || optional.length === 0) {
    const total = required.length === 0 ? ', total=False' : '';
    return `class ${name}(_t.TypedDict${total}):\n${docstring(doc, '    ')}\n${lines(m.fields) || '    pass\n'}`;
  }
  return (
    `class _${name}Required(_t.TypedDict):\n${lines(required)}\n\n` +
    `class ${name}(_${name}Required, total=False):\n${docstring(doc, '    ')}\n${lines(optional)}`
  );
}

// --- types/__init__.py -------------------------------------------------------------------------

export function emitTypesInit(ctx: Context): string {
  const outputModels = ctx.sdk.models.filter((m) => m.role !== 'input').map((m) => m.name);
  const unions = (ctx.sdk.unions ?? []).flatMap((u) => [
    u.name,
    `Unknown${u.name}`,
    `parse_${snake(u.name)}`,
  ]);
  const params = [...[...ctx.ranges.keys()].sort(), ...[...ctx.paramModels].map(paramsName)];
  const enums = [...ctx.enums.keys()];
  const block = (names: string[]) => names.map((n) => `    ${n},`).join('\n');
  return `${HEADER}"""Types of the Platform API: models (what it returns), enums, and params (what you send)."""

from .enums import (
${block(enums)}
)
from .models import (
${block([...outputModels, ...unions])}
)
from .params import (
${block(params)}
)

__all__ = [
${[...enums, ...outputModels, ...unions, ...params].map((n) => `    ${pyString(n)},`).join('\n')}
]
`;
}
