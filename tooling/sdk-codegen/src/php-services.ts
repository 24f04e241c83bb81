/** The PHP service classes (and their `->raw` twins), the service registry and the operations list. */
import { type Context, doc, file, pascal, phpList, str, wrap } from './php-source';
import { maxPerPage } from './model';
import type { Operation, QueryParam, Resource, SdkModel } from './model';
import { deprecationText } from './deprecation';
import { docType, enumsIn, isDateTime, objectPaths, shape } from './php-types';

// --- services ----------------------------------------------------------------------------------

interface MethodParts {
  /** The PHP parameter list. */
  params: string[];
  /** `@param` tags. */
  paramTags: string[];
  /** The expression of the path. */
  path: string;
  /** The PHP expression of the query array. */
  query: string;
  /** The PHP expression of the encoded body, or `null`. */
  body: string;
  /** The arguments to pass this method again (for the next page). */
  callArgs: (params: string) => string;
  enums: string[];
}

function methodParts(ctx: Context, op: Operation): MethodParts {
  const params: string[] = [];
  const paramTags: string[] = [];
  const enums: string[] = [];
  const pathVars = op.pathParams.map((p) => ({ wire: p, php: `$${safeVariable(p)}` }));
  for (const v of pathVars) {
    params.push(`string ${v.php}`);
    paramTags.push(`@param string ${v.php}`);
  }
  let path = str(op.path);
  for (const v of pathVars) {
    path = path.replace(`{${v.wire}}`, `' . rawurlencode(${v.php}) . '`);
  }
  path = path.replace(/ \. ''$/, '').replace(/^'' \. /, '');

  let query = '[]';
  let body = 'null';
  const bodyModel = op.body ? ctx.model(op.body.model) : undefined;
  if (bodyModel) {
    const required = op.body?.required === true && bodyModel.fields.some((f) => f.required);
    params.push(`array $params${required ? '' : ' = []'}`);
    paramTags.push(`@param ${shape(ctx, bodyModel.fields, '')} $params`);
    enums.push(...bodyModel.fields.flatMap((f) => enumsIn(ctx, f.type)));
    const paths = objectPaths(ctx, bodyModel.fields);
    body = `Json::encodeBody($params, [${paths.map(str).join(', ')}])`;
  }
  if (op.upload) {
    params.push('Upload $file');
    paramTags.push(
      "@param Upload $file the file: `Upload::fromPath('students.csv')` or `Upload::fromString($csv, 'students.csv')`",
    );
    body = '$file';
  }
  if (op.query.length > 0) {
    const name = bodyModel ? '$query' : '$params';
    const required = op.query.some((q) => q.required);
    params.push(`array ${name}${required ? '' : ' = []'}`);
    // A feed's cursor is what the feed hands out (an opaque string), '0' (or int 0) or 'oldest'.
    const shapeDoc = queryShape(op.query);
    paramTags.push(
      `@param ${op.feed ? shapeDoc.replace('after?: string,', 'after?: string|int,') : shapeDoc} ${name}`,
    );
    // Checked before anything is sent, so a bad cursor names the parameter instead of costing a request.
    query = op.feed ? `Cursor::inQuery(${name})` : name;
  }
  params.push('?RequestOptions $options = null');
  paramTags.push(
    '@param RequestOptions|null $options headers, idempotency key, timeout, retries for this call',
  );
  const pathArgs = pathVars.map((v) => v.php);
  return {
    params,
    paramTags,
    path,
    query,
    body,
    enums,
    callArgs: (nextParams) =>
      [
        ...pathArgs,
        ...(bodyModel ? ['$params'] : []),
        ...(op.upload ? ['$file'] : []),
        nextParams,
        '$options',
      ].join(', '),
  };
}

function safeVariable(name: string): string {
  const camel = name.replace(/[^A-Za-z0-9]+([A-Za-z0-9])/g, (_, c: string) => c.toUpperCase());
  return /^[A-Za-z_]/.test(camel) && camel !== 'this' ? camel : `p${pascal(camel)}`;
}

function queryShape(query: QueryParam[]): string {
  const lines = query.map((q) => {
    const scalar = queryScalarType(q);
    const key = `${q.name}${q.required ? '' : '?'}`;
    if (q.kind !== 'range') return `    ${key}: ${scalar},`;
    const ops = (q.operators ?? ['gte', 'gt', 'lte', 'lt']).map((o) => `${o}?: ${scalar}`);
    const oneLine = `    ${key}: array{${ops.join(', ')}},`;
    return oneLine.length <= 100
      ? oneLine
      : [`    ${key}: array{`, ...ops.map((o) => `        ${o},`), '    },'].join('\n');
  });
  return `array{\n${lines.join('\n')}\n}`;
}

function queryScalarType(q: QueryParam): string {
  if (q.enumValues && q.enumValues.length > 0) {
    const literals = q.enumValues.map(str).join('|');
    // A long list of literals helps no one in a docblock; the description names the values. The
    // docblock line (`     *     name?: …,`) must also stay within PSR-12's 120 characters.
    const line = `     *     ${q.name}?: ${literals}|list<${literals}>,`;
    return literals.length <= 60 && line.length <= 120
      ? `${literals}|list<${literals}>`
      : 'string|list<string>';
  }
  switch (q.type.kind) {
    case 'string':
      return isDateTime(q.type) ? 'string|\\DateTimeInterface' : 'string';
    case 'integer':
      return 'int';
    case 'number':
      return 'float|int';
    case 'boolean':
      return 'bool';
    case 'enum':
      return `${q.type.name}::*|list<${q.type.name}::*>`;
    case 'literal':
      return str(q.type.value);
    case 'model':
    case 'union':
    case 'array':
    case 'map':
    case 'unknown':
      return 'mixed';
  }
}

/** The response's PHP return type, its docblock type and the closure that parses it. */
function responseParts(
  ctx: Context,
  op: Operation,
  parts: MethodParts,
): { native: string; docType: string; parser: string; uses: string[] } {
  const r = op.response;
  switch (r.kind) {
    case 'none':
      return r.file
        ? {
            native: 'string',
            docType: 'string',
            parser: 'static fn (RawResponse $response): string => $response->body',
            uses: [],
          }
        : { native: 'void', docType: 'null', parser: 'static fn (): mixed => null', uses: [] };
    case 'model': {
      if (ctx.isUnion(r.model)) {
        const base = ctx.unionBase(r.model);
        const short = base === 'Model' ? 'Model' : base.split('\\').pop()!;
        return {
          native: short,
          docType: docType(ctx, { kind: 'union', name: r.model }),
          parser: `static fn (RawResponse $response): ${short} =>\n            ${r.model}::fromArray($response->object())`,
          uses: ctx.unionUses(r.model),
        };
      }
      return {
        native: r.model,
        docType: r.model,
        parser: `static fn (RawResponse $response): ${r.model} =>\n            ${r.model}::fromArray($response->object())`,
        uses: [`PlatformApi\\Model\\${r.model}`],
      };
    }
    case 'page': {
      const union = ctx.isUnion(r.item);
      const itemNative = union ? ctx.unionBase(r.item).split('\\').pop()! : r.item;
      const itemDoc = union ? docType(ctx, { kind: 'union', name: r.item }) : r.item;
      const build = union
        ? `${r.item}::fromArray(Cast::array($item))`
        : `Cast::model($item, ${r.item}::class)`;
      const uses = [
        'PlatformApi\\Core\\Cast',
        'PlatformApi\\Core\\Page',
        `PlatformApi\\Model\\${r.item}`,
      ];
      if (union) uses.push(...ctx.unionUses(r.item));
      return {
        native: 'Page',
        docType: `Page<${itemDoc}>`,
        parser: [
          'fn (RawResponse $response): Page => Page::fromResponse(',
          '            $response,',
          `            static fn (mixed $item): ${itemNative} => ${build},`,
          `            fn (int $page): Page => $this->${op.method.camel}(${parts.callArgs(
            `['page' => $page] + ${parts.query}`,
          )})->parse(),`,
          '        )',
        ].join('\n'),
        uses,
      };
    }
  }
}

function operationDoc(op: Operation): (string | undefined)[] {
  const scope = op.scope ? `Requires the \`${op.scope}\` scope.` : undefined;
  const http = `\`${op.http} ${op.path}\`${op.idempotent ? ' (sent with an Idempotency-Key, so it is retried safely)' : ''}.`;
  return [op.summary, op.description, [http, scope].filter(Boolean).join(' ')];
}

/** `@deprecated …` (which IDEs and static analysers show) for an operation the API deprecated. */
function deprecatedTag(op: Operation): string[] {
  if (!op.deprecated) return [];
  return [wrap(`@deprecated ${deprecationText(op.deprecated)}`, 100).join('\n    ')];
}

const THROWS = [
  '@throws ApiStatusException the API answered with an error (a subclass by status)',
  '@throws ApiConnectionException the API could not be reached',
];
const THROWS_USES = [
  'PlatformApi\\Exception\\ApiConnectionException',
  'PlatformApi\\Exception\\ApiStatusException',
];

/**
 * Hand-written methods a service takes from a trait (`$client->exports->wait($id)`); the service
 * then keeps its `HttpClient` as `$this->http` for them.
 */
const HELPER_TRAITS: Record<string, { trait: string; methods: string }> = {
  exports: { trait: 'PlatformApi\\Export\\ExportsHelpers', methods: '`wait`, `downloadTo`' },
  imports: { trait: 'PlatformApi\\Import\\ImportsHelpers', methods: '`wait`' },
};

export function emitService(ctx: Context, resource: Resource): string {
  const uses = new Set<string>([
    'PlatformApi\\Core\\HttpClient',
    'PlatformApi\\RequestOptions',
    ...THROWS_USES,
  ]);
  const methods: string[] = [];
  for (const op of resource.operations) {
    const parts = methodParts(ctx, op);
    const response = responseParts(ctx, op, parts);
    for (const u of response.uses) if (!u.endsWith('Cast') && !u.endsWith('Json')) uses.add(u);
    for (const e of parts.enums) uses.add(`PlatformApi\\Model\\${e}`);
    if (op.upload) uses.add('PlatformApi\\Core\\Upload');
    const args = [
      ...op.pathParams.map((p) => `$${safeVariable(p)}`),
      ...(op.body ? ['$params'] : []),
      ...(op.upload ? ['$file'] : []),
      ...(op.query.length > 0 ? [op.body ? '$query' : '$params'] : []),
      '$options',
    ].join(', ');
    const call = `$this->raw->${op.method.camel}(${args})->parse()`;
    methods.push(
      '',
      ...doc('    ', operationDoc(op), [
        ...deprecatedTag(op),
        ...parts.paramTags,
        ...(response.native === 'void' ? [] : [`@return ${response.docType}`]),
        ...THROWS,
      ]),
      ...phpMethodHead(op.method.camel, parts.params, response.native),
      response.native === 'void' ? `        ${call};` : `        return ${call};`,
      '    }',
    );
    if (op.feed) {
      uses.add('PlatformApi\\Core\\FeedFollower');
      methods.push('', ...followMethod(op, response.native));
    }
  }
  const helpers = HELPER_TRAITS[resource.camel];
  if (helpers) uses.add(helpers.trait);
  const body = [
    ...doc('', [
      `The ${resource.camel} operations: \`$client->${resource.camel}->…\`. Each method returns the parsed response; \`$client->${resource.camel}->raw->…\` has the same methods returning the raw response (status, headers, request id).${
        helpers
          ? ` Hand-written methods come from \`${helpers.trait.split('\\').pop()!}\`: ${helpers.methods}.`
          : ''
      }`,
    ]),
    `final class ${resource.pascal}Service`,
    '{',
    ...(helpers ? [`    use ${helpers.trait.split('\\').pop()!};`, ''] : []),
    "    /** The same operations, returning the raw response: `->raw->retrieve($id)->header('x-ratelimit-remaining')`. */",
    `    public readonly ${resource.pascal}RawService $raw;`,
    '',
    `    public function __construct(${helpers ? 'private readonly HttpClient $http' : 'HttpClient $http'})`,
    '    {',
    `        $this->raw = new ${resource.pascal}RawService($http);`,
    '    }',
    ...methods,
    '}',
  ];
  return file('PlatformApi\\Service', [...uses], body);
}

/** `follow` of a feed operation: every change after a cursor, read through the plain method, retried. */
function followMethod(op: Operation, native: string): string[] {
  return [
    ...doc(
      '    ',
      [
        `Every change after \`after\`, oldest first, read through \`${op.method.camel}\`: \`foreach\` reads page after page and, once caught up, long-polls for the next change. \`after\` is required: an export's \`cursor\`, a saved \`$follower->cursor\`, an event's \`cursor\` (opaque strings bound to the organization; a position is not one), \`'0'\` (the start) or \`'oldest'\` (the oldest change still kept). \`$follower->cursor\` is where to resume (save it after applying a change). With \`until_caught_up\` the loop ends once a read finds nothing new.`,
        'Connection errors, timeouts, 429 and 5xx are retried for as long as it takes (capped exponential backoff with jitter, or the `Retry-After` asked for); any other error ends the loop. A cursor older than the retention period is a `CursorExpiredException`.',
      ],
      [
        '@param array{',
        '    after: string|int,',
        '    limit?: int,',
        '    type?: string|list<string>,',
        '    wait?: string,',
        '    until_caught_up?: bool,',
        '} $params',
        '@param RequestOptions|null $options headers and timeout of each read (the follower does the retrying)',
        '@param float $maxRetryDelay the longest wait between two attempts, in seconds',
        '@param float|null $giveUpAfter seconds of failing reads before the last error is thrown; null: never',
        '@param (callable(\\Throwable, int, float): mixed)|null $onRetry before each wait: error, retry (1 first), seconds',
        '@return FeedFollower<\\PlatformApi\\Webhook\\EventInterface>',
        '@throws \\PlatformApi\\Exception\\InvalidArgumentException without `after`, or with a cursor that is none',
        ...(op.aliasOf
          ? [
              `@deprecated and will be removed. Use \`${op.aliasOf.split('.')[0]!}->follow\` instead.`,
            ]
          : []),
      ],
    ),
    '    public function follow(',
    '        array $params = [],',
    '        ?RequestOptions $options = null,',
    '        float $maxRetryDelay = 10.0,',
    '        ?float $giveUpAfter = null,',
    '        ?callable $onRetry = null,',
    '    ): FeedFollower {',
    '        return new FeedFollower(',
    `            fn (array $query, ?RequestOptions $read): ${native} =>`,
    `                $this->${op.method.camel}($query, $read),`,
    '            $params,',
    '            $options,',
    '            $maxRetryDelay,',
    '            $giveUpAfter,',
    '            $onRetry,',
    '        );',
    '    }',
  ];
}

export function emitRawService(ctx: Context, resource: Resource): string {
  const uses = new Set<string>([
    'PlatformApi\\Core\\HttpClient',
    'PlatformApi\\Core\\RawResponse',
    'PlatformApi\\RequestOptions',
    ...THROWS_USES,
  ]);
  const methods: string[] = [];
  for (const op of resource.operations) {
    const parts = methodParts(ctx, op);
    const response = responseParts(ctx, op, parts);
    for (const u of response.uses) uses.add(u);
    for (const e of parts.enums) uses.add(`PlatformApi\\Model\\${e}`);
    if (op.upload) uses.add('PlatformApi\\Core\\Upload');
    else if (parts.body !== 'null') uses.add('PlatformApi\\Core\\Json');
    if (op.feed) uses.add('PlatformApi\\Core\\Cursor');
    methods.push(
      '',
      ...doc('    ', operationDoc(op), [
        ...deprecatedTag(op),
        ...parts.paramTags,
        `@return RawResponse<${response.docType}>`,
        ...THROWS,
      ]),
      ...phpMethodHead(op.method.camel, parts.params, 'RawResponse'),
      '        return $this->http->request(',
      `            ${str(op.http)},`,
      `            ${parts.path},`,
      // A list asks for the largest page unless the caller chose a size: fewest requests.
      `            ${op.response.kind === 'page' ? `${parts.query} + ['per_page' => Operations::MAX_PER_PAGE]` : parts.query},`,
      `            ${parts.body},`,
      '            $options,',
      `            ${response.parser.replace(/\n/g, '\n    ')},`,
      '        );',
      '    }',
    );
  }
  const body = [
    ...doc('', [
      `The ${resource.camel} operations returning the raw response: \`$client->${resource.camel}->raw->…\`. \`->parse()\` on the result gives what the plain method returns.`,
    ]),
    `final class ${resource.pascal}RawService`,
    '{',
    '    public function __construct(private readonly HttpClient $http)',
    '    {',
    '    }',
    ...methods,
    '}',
  ];
  return file('PlatformApi\\Service', [...uses], body);
}

export function emitRegistry(model: SdkModel): string {
  const body = [
    ...doc('', [
      'The resource properties of PlatformClient (`$client->students`, …), one per resource of the API.',
    ]),
    'trait ServiceRegistry',
    '{',
    ...model.resources.flatMap((r) => [
      ...doc('    ', [`\`${r.operations.map((o) => o.method.camel).join('`, `')}\``]),
      `    public readonly ${r.pascal}Service $${r.camel};`,
    ]),
    '',
    '    private function registerServices(HttpClient $http): void',
    '    {',
    ...model.resources.map((r) => `        $this->${r.camel} = new ${r.pascal}Service($http);`),
    '    }',
    '}',
  ];
  return file('PlatformApi\\Service', ['PlatformApi\\Core\\HttpClient'], body);
}

export function emitOperations(model: SdkModel): string {
  const body = [
    ...doc('', [
      'Every operation of the API, by id: the live test suite fails when one is never called, so the SDK cannot silently fall behind the contract.',
    ]),
    'final class Operations',
    '{',
    `    /** The API version of the document the SDK was generated from. */`,
    `    public const VERSION = ${str(model.version)};`,
    '',
    `    /** The OAuth 2.0 token endpoint, relative to the base URL. */`,
    `    public const TOKEN_PATH = ${str(model.tokenPath)};`,
    '',
    `    /** The largest page the API serves: what list calls ask for unless given \`per_page\`. */`,
    `    public const MAX_PER_PAGE = ${maxPerPage(model.operations)};`,
    '',
    '    /** @var array<string, array{0: string, 1: string, 2: string}> id => [method, path, PHP call] */',
    '    public const ALL = [',
    ...model.operations.flatMap((op) =>
      phpList(
        `        ${str(op.id)} => `,
        [str(op.http), str(op.path), str(`${op.resource.camel}->${op.method.camel}`)],
        ',',
      ),
    ),
    '    ];',
    '',
    '    /** @var list<string> */',
    '    public const SCOPES = [',
    ...model.scopes.map((s) => `        ${str(s)},`),
    '    ];',
    '',
    '    private function __construct()',
    '    {',
    '    }',
    '}',
  ];
  return file('PlatformApi\\Service', [], body);
}

/**
 * A method's signature and opening brace: on one line, or (PSR-12, past the 120-character line
 * the PHP lint allows) one parameter per line with `): Type {` closing them.
 */
function phpMethodHead(name: string, params: readonly string[], returns: string): string[] {
  const line = `    public function ${name}(${params.join(', ')}): ${returns}`;
  if (line.length <= 120) return [line, '    {'];
  return [
    `    public function ${name}(`,
    ...params.map((param) => `        ${param},`),
    `    ): ${returns} {`,
  ];
}
