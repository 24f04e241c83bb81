/**
 * The API reference's samples: every operation called from the TypeScript, PHP and Python
 * clients, written from the same SDK model the clients are generated from, so a sample cannot
 * name a method or parameter the client does not have.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Field, Model, Operation, SdkModel, TypeRef } from './model';

/** The reference's opening text and set-up samples (from src/ and dist/ alike). */
const REFERENCE_INTRO = path.join(__dirname, '..', 'templates', 'reference-intro.md');

type Value = string | number | boolean | null | Value[] | { [key: string]: Value };

/** A plausible value for a field, for documentation. */
function sampleOf(field: Field, type: TypeRef, model: SdkModel): Value {
  if (field.example !== undefined) return field.example as Value;
  switch (type.kind) {
    case 'string':
      if (type.format === 'email') return 'ana.silva@school.example';
      if (type.format === 'date-time') return '2026-09-01T08:00:00Z';
      if (type.format === 'date') return '2026-09-01';
      if (type.format === 'uri') return 'https://sis.school.example/hooks/platform';
      return SAMPLE_STRINGS[field.name] ?? field.name.replace(/_/g, ' ');
    case 'integer':
      return SAMPLE_NUMBERS[field.name] ?? 1;
    case 'number':
      return SAMPLE_NUMBERS[field.name] ?? 100;
    case 'boolean':
      return true;
    case 'enum': {
      const values = model.enums.find((e) => e.name === type.name)!.values;
      return values.find((v) => v !== '*' && v !== 'all') ?? values[0]!;
    }
    case 'literal':
      return type.value;
    case 'array':
      return [sampleOf({ ...field, example: undefined }, type.items, model)];
    case 'map':
    case 'model':
    case 'union':
    case 'unknown':
      return null;
  }
}

const SAMPLE_STRINGS: Record<string, string> = {
  student_number: 'S-2026-0042',
  first_name: 'Ana',
  last_name: 'Silva',
  code: 'MATH-101',
  title: 'Algebra I',
  currency: 'EUR',
  name: 'Nightly SIS sync',
  url: 'https://sis.school.example/hooks/platform',
};
const SAMPLE_NUMBERS: Record<string, number> = {
  amount: 12500,
  max_score: 100,
  score: 87.5,
};

/** The body a sample sends: the required fields of its input model (or one field to change). */
function sampleBody(operation: Operation, model: SdkModel): [string, Value][] {
  if (!operation.body) return [];
  const input = model.models.find((m) => m.name === operation.body!.model)!;
  const required = input.fields.filter((f) => f.required);
  const fields: Field[] = required.length > 0 ? required : firstSettable(input);
  return fields.map((f) => [f.name, sampleOf(f, f.type, model)]);
}

function firstSettable(input: Model): Field[] {
  const field = input.fields.find((f) => f.type.kind !== 'array' && f.type.kind !== 'map');
  return field ? [field] : [];
}

/** The query a list sample sends: a filter if there is one, and a page size. */
function sampleQuery(operation: Operation): [string, Value][] {
  const filter = operation.query.find((q) => q.enumValues);
  return [
    ...(filter ? [[filter.name, filter.enumValues![0]!] as [string, Value]] : []),
    ...(operation.query.some((q) => q.name === 'per_page')
      ? [['per_page', 100] as [string, Value]]
      : []),
  ];
}

/** The ULID part of a sample id whose schema gives no example. */
const SAMPLE_ULID = '01JD6Y3ZK8R5V2N3M4P5Q6R7S8';

/**
 * The id a sample puts in the path: the example id of the model the resource's operations return
 * (a `res_…` for exam results), so a sample never names an id of another kind.
 */
function pathSample(operation: Operation, model: SdkModel): string {
  const resource = model.resources.find((r) => r.camel === operation.resource.camel)!;
  for (const candidate of resource.operations) {
    const response = candidate.response;
    if (candidate.pathParams.length !== 1 || response.kind !== 'model') continue;
    // A union (events) has the id of each of its members.
    const name = model.unions.find((u) => u.name === response.model)?.members[0] ?? response.model;
    const returned = model.models.find((m) => m.name === name);
    const id = returned?.fields.find((f) => f.name === 'id');
    if (typeof id?.example === 'string') return id.example;
    if (id?.type.kind === 'string' && id.type.prefix) return `${id.type.prefix}_${SAMPLE_ULID}`;
  }
  throw new Error(`${operation.id}: no model of ${resource.camel} has an example id`);
}

const json = (value: Value): string => JSON.stringify(value);

function tsValue(value: Value): string {
  if (Array.isArray(value)) return `[${value.map(tsValue).join(', ')}]`;
  if (value !== null && typeof value === 'object') {
    return `{ ${Object.entries(value)
      .map(([k, v]) => `${/^[a-z_]\w*$/i.test(k) ? k : json(k)}: ${tsValue(v)}`)
      .join(', ')} }`;
  }
  return typeof value === 'string' ? `'${value.replace(/'/g, "\\'")}'` : json(value);
}

function phpValue(value: Value): string {
  if (Array.isArray(value)) return `[${value.map(phpValue).join(', ')}]`;
  if (value !== null && typeof value === 'object') {
    return `[${Object.entries(value)
      .map(([k, v]) => `'${k}' => ${phpValue(v)}`)
      .join(', ')}]`;
  }
  if (value === null) return 'null';
  return typeof value === 'string' ? `'${value.replace(/'/g, "\\'")}'` : json(value);
}

function pyValue(value: Value): string {
  if (Array.isArray(value)) return `[${value.map(pyValue).join(', ')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.entries(value)
      .map(([k, v]) => `${json(k)}: ${pyValue(v)}`)
      .join(', ')}}`;
  }
  if (value === null) return 'None';
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  return json(value);
}

/** What the call returns, named for the sample's left-hand side. */
function resultName(operation: Operation): string | undefined {
  if (operation.response.kind === 'none') return undefined;
  if (operation.response.kind === 'page') return 'page';
  const name = operation.response.model;
  const camel = name.charAt(0).toLowerCase() + name.slice(1);
  // A model named after a reserved word (`Export`) cannot name a variable in every language.
  return RESERVED.has(camel) ? `${camel}Resource` : camel;
}

/** Words no sample's variable may be, in TypeScript, PHP or Python. */
const RESERVED = new Set(['export', 'import', 'class', 'function', 'default', 'new', 'delete']);

export interface Samples {
  typescript: string;
  php: string;
  python: string;
}

/** An upload's samples: a CSV file from disk, with the operation's required query. */
function uploadSamples(operation: Operation, model: SdkModel, result: string | undefined): Samples {
  const query = operation.query
    .filter((q) => q.required)
    .map((q): [string, Value] => [q.name, sampleEnum(q, model) ?? 'value']);
  const { camel: resource, snake: resourceSnake } = operation.resource;
  const { camel: method, snake: methodSnake } = operation.method;
  const assign = (name: string) => (result ? `${name} = ` : '');
  return {
    typescript: `${assign(`const ${result}`)}await platform.${resource}.${method}({ query: ${tsValue(Object.fromEntries(query))}, body: { file: 'external_id,student_number,first_name,last_name\\nSIS-1,N-1,Ada,Lovelace\\n', filename: 'students.csv' } });`,
    php: `${assign(`$${result}`)}$client->${resource}->${method}(Upload::fromPath('students.csv'), ${phpValue(Object.fromEntries(query))});`,
    python: `${assign(snake(result ?? ''))}client.${resourceSnake}.${methodSnake}(file=Path("students.csv"), ${query.map(([k, v]) => `${k}=${pyValue(v)}`).join(', ')})`,
  };
}

/** The first value of a query parameter's enum: `students` for an import's `collection`. */
function sampleEnum(q: Operation['query'][number], model: SdkModel): string | undefined {
  const type = q.type;
  if (type.kind !== 'enum') return q.enumValues?.[0];
  return model.enums.find((e) => e.name === type.name)?.values[0];
}

export function samplesFor(operation: Operation, model: SdkModel): Samples {
  if (operation.upload) return uploadSamples(operation, model, resultName(operation));
  const id = operation.pathParams.length > 0 ? pathSample(operation, model) : undefined;
  const body = sampleBody(operation, model);
  const query = operation.response.kind === 'page' ? sampleQuery(operation) : [];
  const result = resultName(operation);
  const { camel: resource, snake: resourceSnake } = operation.resource;
  const { camel: method, snake: methodSnake } = operation.method;

  // TypeScript: the id first, then the request arguments; a query-only route also takes the
  // query itself.
  const tsArgs: string[] = [];
  if (id) tsArgs.push(`'${id}'`);
  if (body.length) tsArgs.push(`{ body: ${tsValue(Object.fromEntries(body))} }`);
  else if (query.length && id) tsArgs.push(`{ query: ${tsValue(Object.fromEntries(query))} }`);
  else if (query.length) tsArgs.push(tsValue(Object.fromEntries(query)));
  const tsCall = tsArgs.join(', ');
  const typescript = `${result ? `const ${result} = ` : ''}await platform.${resource}.${method}(${tsCall});`;

  const phpArgs = [
    ...(id ? [`'${id}'`] : []),
    ...(body.length ? [phpValue(Object.fromEntries(body))] : []),
    ...(query.length ? [phpValue(Object.fromEntries(query))] : []),
  ];
  const php = `${result ? `$${result} = ` : ''}$client->${resource}->${method}(${phpArgs.join(', ')});`;

  const pyArgs = [
    ...(id ? [json(id)] : []),
    ...[...body, ...query].map(([k, v]) => `${k}=${pyValue(v)}`),
  ];
  const python = `${result ? `${snake(result)} = ` : ''}client.${resourceSnake}.${methodSnake}(${pyArgs.join(', ')})`;
  return { typescript, php, python };
}

const snake = (camel: string): string => camel.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();

/** `docs/api-reference.md`: every operation, its scope, and a call in each client. */
export function emitReference(model: SdkModel): Map<string, string> {
  // The prose and the set-up samples sit in a template: they are text, not code of this package.
  const lines: string[] = [readFileSync(REFERENCE_INTRO, 'utf8').trimEnd(), ''];
  for (const resource of model.resources) {
    lines.push(`## ${resource.pascal.replace(/([a-z])([A-Z])/g, '$1 $2')}`, '');
    for (const operation of resource.operations) {
      if (operation.aliasOf !== undefined) continue;
      const samples = samplesFor(operation, model);
      lines.push(
        `### ${operation.summary}`,
        '',
        `\`${operation.http} ${operation.path}\` · scope ${operation.scope ? `\`${operation.scope}\`` : 'any valid token'}${
          operation.response.kind === 'page' ? ' · paginated: iterate the page for every item' : ''
        }`,
        '',
        '```ts',
        samples.typescript,
        '```',
        '',
        '```php',
        samples.php,
        '```',
        '',
        '```python',
        samples.python,
        '```',
        '',
      );
    }
  }
  return new Map([
    ['docs/api-reference.md', lines.join('\n')],
    ['packages/client/src/reference-samples.test-d.ts', typeScriptSamplesCheck(model)],
    [CODE_SAMPLES_FILE, codeSamples(model)],
  ]);
}

/** Where the samples go for the OpenAPI document's `x-codeSamples` (the contract reads it). */
export const CODE_SAMPLES_FILE = 'packages/contract/code-samples.json';

/**
 * The same samples by operation id, in the `x-codeSamples` form reference UIs (Redoc, Scalar)
 * show beside each operation. The contract puts them into openapi.json.
 */
function codeSamples(model: SdkModel): string {
  const byOperation: Record<string, { lang: string; label: string; source: string }[]> = {};
  for (const operation of model.operations) {
    const samples = samplesFor(operation, model);
    byOperation[operation.id] = [
      { lang: 'TypeScript', label: 'TypeScript', source: samples.typescript },
      { lang: 'PHP', label: 'PHP', source: samples.php },
      { lang: 'Python', label: 'Python', source: samples.python },
    ];
  }
  return `${JSON.stringify(byOperation, null, 2)}\n`;
}

/**
 * The TypeScript samples as a file the SDK's `typecheck` compiles (never bundled: nothing imports
 * it), so a sample that stops matching the SDK's types fails CI.
 */
function typeScriptSamplesCheck(model: SdkModel): string {
  const lines = [
    '// Generated by @platform/sdk-codegen: the TypeScript samples of docs/api-reference.md, type-checked',
    '// against the SDK by `pnpm typecheck`. Do not edit; regenerate with `pnpm generate:sdks`.',
    "import { createClient } from './index';",
    '',
    "const platform = createClient({ baseUrl: 'https://api.school.example', token: 'pat_sample' });",
    '',
  ];
  for (const operation of model.operations) {
    const name = `${operation.resource.camel}_${operation.method.camel}`;
    lines.push(
      `export async function ${name}() {`,
      `  ${samplesFor(operation, model).typescript}`,
      ...(resultName(operation) ? [`  return ${resultName(operation)!};`] : []),
      '}',
      '',
    );
  }
  return lines.join('\n');
}
