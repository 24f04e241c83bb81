import { spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Field, SdkModel } from './model';
import { constantName, emitPhp } from './php';

const field = (name: string, camel: string, type: Field['type'], extra: Partial<Field> = {}) => ({
  name,
  camel,
  type,
  required: true,
  nullable: false,
  ...extra,
});

/**
 * Shapes the real contract does not have (yet): maps, unknown values, nullable lists and unions,
 * nested input objects, a 204, a body and a query together, names PHP reserves. The PHP suite
 * covers the real model's output; this covers what a contract change could bring.
 */
const model: SdkModel = {
  version: '1.2.3',
  tokenPath: '/oauth/token',
  scopes: ['things:read'],
  enums: [{ name: 'ThingKind', values: ['*', '1st', 'class', 'a-b', 'A_B'] }],
  unions: [{ name: 'Shape', members: ['Circle', 'Square'], discriminator: 'kind' }],
  events: [],
  models: [
    {
      name: 'Thing',
      role: 'resource',
      fields: [
        field('id', 'id', { kind: 'string' }),
        field('metadata', 'metadata', { kind: 'map', values: { kind: 'string' } }),
        field('anything', 'anything', { kind: 'unknown' }, { nullable: true }),
        field(
          'parts',
          'parts',
          { kind: 'array', items: { kind: 'model', name: 'Circle' } },
          { nullable: true },
        ),
        field('shape', 'shape', { kind: 'union', name: 'Shape' }, { nullable: true }),
        field('kind', 'kind', { kind: 'enum', name: 'ThingKind' }),
        field('sdk_payload', 'sdkPayload', { kind: 'string' }, { required: false }),
        field(
          'seen_at',
          'seenAt',
          { kind: 'string', format: 'date-time' },
          { nullable: true, required: false },
        ),
      ],
    },
    {
      name: 'Circle',
      role: 'resource',
      fields: [field('kind', 'kind', { kind: 'literal', value: 'circle' })],
    },
    {
      name: 'Square',
      role: 'resource',
      fields: [field('kind', 'kind', { kind: 'literal', value: 'square' })],
    },
    {
      name: 'ThingCreate',
      role: 'input',
      fields: [
        field('metadata', 'metadata', { kind: 'map', values: { kind: 'string' } }),
        field('owner', 'owner', { kind: 'model', name: 'OwnerInput' }, { required: false }),
        field('kind', 'kind', { kind: 'enum', name: 'ThingKind' }, { required: false }),
      ],
    },
    {
      name: 'OwnerInput',
      role: 'input',
      fields: [field('tags', 'tags', { kind: 'map', values: { kind: 'integer' } })],
    },
  ],
  resources: [],
  operations: [],
};
const ops: SdkModel['operations'] = [
  {
    id: 'things.create',
    resource: { camel: 'things', snake: 'things' },
    method: { camel: 'create', snake: 'create' },
    http: 'POST',
    path: '/v1/groups/{group_id}/things',
    pathParams: ['group_id'],
    query: [
      {
        name: 'dry_run',
        camel: 'dryRun',
        kind: 'scalar',
        type: { kind: 'boolean' },
        required: false,
      },
    ],
    body: { model: 'ThingCreate', required: true },
    response: { kind: 'model', model: 'Thing' },
    scope: 'things:write',
    summary: 'Create a thing',
    idempotent: true,
  },
  {
    id: 'things.purge',
    resource: { camel: 'things', snake: 'things' },
    method: { camel: 'purge', snake: 'purge' },
    http: 'DELETE',
    path: '/v1/things/{id}',
    pathParams: ['id'],
    query: [],
    response: { kind: 'none' },
    scope: null,
    summary: 'Purge */ a thing',
    idempotent: false,
  },
];
model.operations = ops;
model.resources = [{ camel: 'things', snake: 'things', pascal: 'Things', operations: ops }];

describe('emitPhp', () => {
  const files = emitPhp(model);
  const get = (relative: string) => {
    const content = files.get(`packages/client-php/src/${relative}`);
    if (content === undefined) throw new Error(`not emitted: ${relative}`);
    return content;
  };

  it('emits services, raw twins, models, enums, unions, the registry and the operation list', () => {
    expect([...files.keys()].map((f) => path.basename(f)).sort()).toEqual(
      [
        'Circle.php',
        'Operations.php',
        'ServiceRegistry.php',
        'Shape.php',
        'Square.php',
        'Thing.php',
        'ThingKind.php',
        'ThingsRawService.php',
        'ThingsService.php',
        'UnknownShape.php',
      ].sort(),
    );
    expect(emitPhp(model)).toEqual(files); // deterministic
  });

  it('keeps every generated file valid PHP', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'emit-php-'));
    try {
      for (const [relative, content] of files) {
        const target = path.join(dir, relative);
        mkdirSync(path.dirname(target), { recursive: true });
        writeFileSync(target, content);
        const lint = spawnSync('php', ['-l', target], { encoding: 'utf8' });
        expect({ file: relative, out: lint.stdout.trim(), status: lint.status }).toEqual({
          file: relative,
          out: `No syntax errors detected in ${target}`,
          status: 0,
        });
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('renames what would clash and names constants PHP allows', () => {
    const thing = get('Model/Thing.php');
    expect(thing).toContain('public readonly ?string $sdkPayloadValue = null,');
    expect(thing).toContain('public readonly mixed $anything,');
    expect(thing).toContain('public readonly ?Model $shape,');
    expect(constantName('*')).toBe('ALL');
    expect(constantName('1st')).toBe('V_1ST');
    expect(constantName('class')).toBe('CLASS_');
    const kinds = get('Model/ThingKind.php');
    expect(kinds).toContain("public const A_B = 'a-b';");
    expect(kinds).toContain("public const A_B_ = 'A_B';");
  });

  it('keeps objects objects in request bodies, nested ones too', () => {
    expect(get('Service/ThingsRawService.php')).toContain(
      "Json::encodeBody($params, ['', 'metadata', 'owner', 'owner.tags'])",
    );
    expect(get('Model/Thing.php')).toContain("return ['', 'metadata', 'parts.*', 'shape'];");
  });

  it('takes path parameters, then the body, then the query; a 204 returns void', () => {
    const service = get('Service/ThingsService.php');
    expect(service).toContain(
      'public function create(string $groupId, array $params, array $query = [], ?RequestOptions $options = null): Thing',
    );
    expect(service).toContain(
      'public function purge(string $id, ?RequestOptions $options = null): void',
    );
    expect(service).toContain('Purge *\\/ a thing');
    expect(get('Service/ThingsRawService.php')).toContain(
      "'/v1/groups/' . rawurlencode($groupId) . '/things',",
    );
  });

  it('falls back to the Unknown member for a discriminator it does not know', () => {
    expect(get('Model/Shape.php')).toContain("'circle' => Circle::class,");
    expect(get('Model/Shape.php')).toContain('UnknownShape::fromArray($data)');
  });
});
