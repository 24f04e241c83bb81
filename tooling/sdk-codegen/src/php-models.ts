/** The PHP model classes, enum constants classes and union factories. */
import {
  type Context,
  EVENT_INTERFACE,
  constantName,
  doc,
  file,
  pascal,
  phpList,
  propertyName,
  str,
} from './php-source';
import type { EnumType, Field, Model, TypeRef, UnionType } from './model';
import { docType, enumsIn, isDateTime, nativeType, needsDocType, objectPaths } from './php-types';

// --- models ------------------------------------------------------------------------------------

/** A PHP expression converting `value` (mixed) into the field's type, leniently. */
function castExpr(ctx: Context, type: TypeRef, nullable: boolean, value: string): string {
  const n = nullable ? 'nullable' : '';
  const helper = (name: string) => `Cast::${n === '' ? name : n + pascal(name)}`;
  switch (type.kind) {
    case 'string':
      return isDateTime(type) ? `${helper('dateTime')}(${value})` : `${helper('string')}(${value})`;
    case 'enum':
    case 'literal':
      return `${helper('string')}(${value})`;
    case 'integer':
      return `${helper('int')}(${value})`;
    case 'number':
      return `${helper('float')}(${value})`;
    case 'boolean':
      return `${helper('bool')}(${value})`;
    case 'model':
      return `${helper('model')}(${value}, ${type.name}::class)`;
    case 'union': {
      const expr = `${type.name}::fromArray(Cast::array(${value}))`;
      return nullable
        ? orNull(value, `${type.name}::fromArray(Cast::array($v))`, nativeType(ctx, type))
        : expr;
    }
    case 'array':
    case 'map': {
      const fn = type.kind === 'array' ? 'list' : 'map';
      const inner = type.kind === 'array' ? type.items : type.values;
      const expr = (v: string) => {
        if (inner.kind === 'model') return `Cast::model${pascal(fn)}(${v}, ${inner.name}::class)`;
        const simple = simpleCast(inner);
        // A union's factory says what it returns; naming the interface again overflows the line.
        const returns = inner.kind === 'union' ? '' : `: ${nativeType(ctx, inner)}`;
        const item =
          simple ?? `static fn (mixed $item)${returns} => ${castExpr(ctx, inner, false, '$item')}`;
        return `Cast::${fn}(${v}, ${item})`;
      };
      return nullable ? orNull(value, expr('$v'), 'array') : expr(value);
    }
    case 'unknown':
      return value;
  }
}

/** `Cast::string(...)` and the like: a first-class callable for a scalar item. */
function simpleCast(type: TypeRef): string | undefined {
  switch (type.kind) {
    case 'string':
      return isDateTime(type) ? 'Cast::dateTime(...)' : 'Cast::string(...)';
    case 'enum':
    case 'literal':
      return 'Cast::string(...)';
    case 'integer':
      return 'Cast::int(...)';
    case 'number':
      return 'Cast::float(...)';
    case 'boolean':
      return 'Cast::bool(...)';
    case 'model':
    case 'union':
    case 'array':
    case 'map':
    case 'unknown':
      return undefined;
  }
}

/** `Cast::orNull(…)`, over three lines when long (it is only used for a model's field, 12 columns in). */
function orNull(value: string, expr: string, returns: string): string {
  const fn = `static fn (mixed $v): ${returns} => ${expr}`;
  const oneLine = `Cast::orNull(${value}, ${fn})`;
  if (oneLine.length <= 104) return oneLine;
  return `Cast::orNull(\n                ${value},\n                ${fn},\n            )`;
}

/** A PHP expression turning a property back into its JSON value. */
function serializeExpr(type: TypeRef, value: string): string {
  switch (type.kind) {
    case 'string':
      return isDateTime(type) ? `Cast::serialize(${value})` : value;
    case 'model':
    case 'union':
    case 'array':
    case 'map':
      return `Cast::serialize(${value})`;
    case 'enum':
    case 'literal':
    case 'integer':
    case 'number':
    case 'boolean':
    case 'unknown':
      return value;
  }
}

export function emitModel(ctx: Context, m: Model): string {
  const isEvent = m.role === 'event';
  const fields = orderedFields(m.fields);
  const params = constructorParams(ctx, fields);

  const fromArgs = fields.map(
    (f) =>
      `            ${castExpr(ctx, f.type, f.nullable || !f.required, `$data[${str(f.name)}] ?? null`)},`,
  );

  const toArrayFixed = toArrayMethod(fields);

  const paths = objectPaths(ctx, m.fields);
  const uses = ['PlatformApi\\Core\\Cast', 'PlatformApi\\Core\\Model'];
  if (isEvent) uses.push('PlatformApi\\Webhook\\EventInterface');
  const body = [
    ...doc('', [m.description ?? defaultModelDescription(m)], fieldSeeTags(ctx, m)),
    `final class ${m.name} extends Model${isEvent ? ' implements EventInterface' : ''}`,
    '{',
    ...(isEvent && m.fields.some((f) => f.name === 'type' && f.type.kind === 'literal')
      ? [`    public const TYPE = ${str(literalOf(m, 'type'))};`, '']
      : []),
    `    public function __construct(`,
    ...params,
    '    ) {',
    '    }',
    '',
    '    /** @param array<array-key, mixed> $data */',
    '    public static function fromArray(array $data): static',
    '    {',
    '        $model = new static(',
    ...fromArgs,
    '        );',
    '        /** @var array<string, mixed> $data */',
    '        $model->sdkPayload = $data;',
    '        return $model;',
    '    }',
    '',
    ...toArrayFixed,
    ...(paths.length > 1
      ? [
          '',
          '    public static function objectPaths(): array',
          '    {',
          ...phpList('        return ', paths.map(str), ';'),
          '    }',
        ]
      : []),
    ...(isEvent
      ? [
          '',
          '    public function eventType(): string',
          '    {',
          '        return $this->type;',
          '    }',
        ]
      : []),
    '}',
  ];
  return file('PlatformApi\\Model', uses, body);
}

/** The constructor's promoted properties, each with its docblock. */
function constructorParams(ctx: Context, fields: Field[]): string[] {
  const params: string[] = [];
  for (const f of fields) {
    const optional = !f.required;
    const nullable = f.nullable || optional;
    const native = nativeType(ctx, f.type);
    const declared = native === 'mixed' ? 'mixed' : `${nullable ? '?' : ''}${native}`;
    const docLines = doc(
      '        ',
      [f.description],
      needsDocType(f.type) ? [`@var ${docType(ctx, f.type)}${nullable ? '|null' : ''}`] : [],
    );
    params.push(
      ...docLines,
      `        public readonly ${declared} $${propertyName(f)}${optional ? ' = null' : ''},`,
    );
  }
  return params;
}

/** `toArray()`: the received payload as is, else required keys always and optional ones when set. */
function toArrayMethod(fields: Field[]): string[] {
  const required = fields.filter((f) => f.required);
  const optional = fields.filter((f) => !f.required);
  const serialize = (f: Field) => serializeExpr(f.type, `$this->${propertyName(f)}`);
  const toArray = [
    '    public function toArray(): array',
    '    {',
    '        if ($this->sdkPayload !== null) {',
    '            return $this->sdkPayload;',
    '        }',
    `        $data = [${required.length === 0 ? ']' : ''}`,
    ...(required.length > 0
      ? [...required.map((f) => `            ${str(f.name)} => ${serialize(f)},`), '        ];']
      : []),
    ...optional.flatMap((f) => [
      `        if ($this->${propertyName(f)} !== null) {`,
      `            $data[${str(f.name)}] = ${serialize(f)};`,
      '        }',
    ]),
    '        return $data;',
    '    }',
  ];
  // `$data = [];` reads better than `$data = []` followed by nothing.
  return toArray.map((l) => (l === '        $data = []' ? '        $data = [];' : l));
}

function literalOf(m: Model, name: string): string {
  const f = m.fields.find((x) => x.name === name);
  return f && f.type.kind === 'literal' ? f.type.value : '';
}

function defaultModelDescription(m: Model): string {
  switch (m.role) {
    case 'event':
      return `The \`${literalOf(m, 'type')}\` event. Unknown keys are kept: read them as \`$event['key']\`.`;
    case 'problem':
      return `Part of an RFC 9457 problem document (\`${m.name}\`).`;
    case 'resource':
    case 'input':
      return `The API's \`${m.name}\` object. Unknown keys are kept: read them as \`$model['key']\`.`;
  }
}

/** `@see` the enums a model's fields use, so the constants are one click away. */
function fieldSeeTags(ctx: Context, m: Model): string[] {
  const names = [...new Set(m.fields.flatMap((f) => enumsIn(ctx, f.type)))];
  return names.map((n) => `@see ${n} for the values of the fields typed with it`);
}

/** Required fields first (PHP needs optional parameters last), each group in schema order. */
function orderedFields(fields: Field[]): Field[] {
  return [...fields.filter((f) => f.required), ...fields.filter((f) => !f.required)];
}

export function emitEnum(e: EnumType): string {
  const names = new Map<string, string>();
  for (const value of e.values) {
    let name = constantName(value);
    while ([...names.values()].includes(name)) name = `${name}_`;
    names.set(value, name);
  }
  const body = [
    ...doc(
      '',
      [
        e.description,
        `The values of \`${e.name}\` this SDK version knows. Responses keep the field a plain string, so a value a newer server adds never breaks this client: compare with these constants and have a default branch.`,
      ],
      [],
    ),
    `final class ${e.name}`,
    '{',
    ...e.values.map((v) => `    public const ${names.get(v)} = ${str(v)};`),
    '',
    '    private function __construct()',
    '    {',
    '    }',
    '',
    "    /** @return list<string> every known value, in the API's order */",
    '    public static function values(): array',
    '    {',
    ...phpList(
      '        return ',
      e.values.map((v) => `self::${names.get(v)}`),
      ';',
    ),
    '    }',
    '',
    '    /** Whether this SDK version knows `$value` (a newer server may send others). */',
    '    public static function isKnown(string $value): bool',
    '    {',
    '        return in_array($value, self::values(), true);',
    '    }',
    '}',
  ];
  return file('PlatformApi\\Model', [], body);
}

export function emitUnion(ctx: Context, u: UnionType): string {
  const base = ctx.unionBase(u.name);
  const members = u.members.map((name) => ctx.model(name));
  const tag = u.discriminator;
  const entries = tag
    ? members.map((m) => `        ${str(literalOf(m, tag))} => ${m.name}::class,`)
    : [];
  const uses = base === 'Model' ? ['PlatformApi\\Core\\Model'] : [base.slice(1)];
  const returns = base === 'Model' ? 'Model' : base.split('\\').pop()!;
  const body = [
    ...doc(
      '',
      [
        u.description ??
          `One of ${u.members.length} models${tag ? `, told apart by \`${tag}\`` : ''}. \`fromArray()\` builds the matching class, or \`Unknown${u.name}\` for a ${tag ?? 'kind'} this SDK version does not know.`,
      ],
      [],
    ),
    `final class ${u.name}`,
    '{',
    ...(tag
      ? [
          `    /** @var array<string, class-string<${returns}&Model>> the class of each \`${tag}\` */`,
          '    public const CLASSES = [',
          ...entries,
          '    ];',
          '',
        ]
      : []),
    '    private function __construct()',
    '    {',
    '    }',
    '',
    `    /** @param array<array-key, mixed> $data */`,
    `    public static function fromArray(array $data): ${returns}`,
    '    {',
    ...(tag
      ? [
          `        $tag = $data[${str(tag)}] ?? null;`,
          '        $class = is_string($tag) ? (self::CLASSES[$tag] ?? null) : null;',
          `        return $class === null ? Unknown${u.name}::fromArray($data) : $class::fromArray($data);`,
        ]
      : [`        return Unknown${u.name}::fromArray($data);`]),
    '    }',
    '}',
  ];
  return file('PlatformApi\\Model', uses, body);
}

export function emitUnknownMember(ctx: Context, u: UnionType): string {
  const isEvent = ctx.unionBase(u.name) === EVENT_INTERFACE;
  const uses = ['PlatformApi\\Core\\Cast', 'PlatformApi\\Core\\Model'];
  if (isEvent) uses.push('PlatformApi\\Webhook\\EventInterface');
  const tag = u.discriminator ?? 'type';
  const body = [
    ...doc('', [
      isEvent
        ? 'An event whose `type` this SDK version does not know, probably because the API is newer. Its signature was valid: acknowledge it (answer 2xx) or handle it from `toArray()`; upgrade the SDK to get it typed.'
        : `A \`${u.name}\` of a kind this SDK version does not know; \`toArray()\` holds it as received.`,
    ]),
    `final class Unknown${u.name} extends Model${isEvent ? ' implements EventInterface' : ''}`,
    '{',
    '    /**',
    `     * @param array<string, mixed> $data the \`data\` member as received, if any`,
    '     */',
    '    public function __construct(',
    `        public readonly string $${tag === 'type' ? 'type' : 'kind'},`,
    '        public readonly ?string $id = null,',
    '        public readonly array $data = [],',
    '    ) {',
    '    }',
    '',
    '    /** @param array<array-key, mixed> $data */',
    '    public static function fromArray(array $data): static',
    '    {',
    '        $model = new static(',
    `            Cast::string($data[${str(tag)}] ?? null),`,
    "            Cast::nullableString($data['id'] ?? null),",
    "            Cast::array($data['data'] ?? null),",
    '        );',
    '        /** @var array<string, mixed> $data */',
    '        $model->sdkPayload = $data;',
    '        return $model;',
    '    }',
    '',
    '    public function toArray(): array',
    '    {',
    `        return $this->sdkPayload ?? [${str(tag)} => $this->${tag === 'type' ? 'type' : 'kind'}, 'id' => $this->id, 'data' => $this->data];`,
    '    }',
    ...(isEvent
      ? [
          '',
          '    public function eventType(): string',
          '    {',
          '        return $this->type;',
          '    }',
        ]
      : []),
    '}',
  ];
  return file('PlatformApi\\Model', uses, body);
}
