import { execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Model, SdkModel } from './model';
import { emitPython, PYTHON_ROOT } from './python';

/** A small model with the awkward cases: keywords, reserved names, a union, an action, a 204. */
function model(): SdkModel {
  return {
    version: '1.2.3',
    apiVersion: '2026-01-01',
    tokenPath: '/oauth/token',
    scopes: ['things:read', 'things:write'],
    enums: [{ name: 'ThingStatus', values: ['new', 'done'] }],
    unions: [{ name: 'Event', members: ['ThingCreatedEvent'], discriminator: 'type' }],
    events: [
      { type: 'thing.created', model: 'ThingCreatedEvent', data: 'Thing', scope: 'things:read' },
    ],
    models: [thingModel(), thingCreatedEventModel(), thingCreateModel()],
    resources: [],
    operations: [],
  };
}

/** The resource: a keyword, a reserved name, an enum, a date-time and a map among its fields. */
function thingModel(): Model {
  return {
    name: 'Thing',
    role: 'resource',
    fields: [
      { name: 'id', camel: 'id', type: { kind: 'string' }, required: true, nullable: false },
      { name: 'from', camel: 'from', type: { kind: 'string' }, required: true, nullable: true },
      {
        name: 'to_dict',
        camel: 'toDict',
        type: { kind: 'integer' },
        required: false,
        nullable: false,
      },
      {
        name: 'status',
        camel: 'status',
        type: { kind: 'enum', name: 'ThingStatus' },
        required: true,
        nullable: false,
      },
      {
        name: 'at',
        camel: 'at',
        type: { kind: 'string', format: 'date-time' },
        required: true,
        nullable: false,
      },
      {
        name: 'tags',
        camel: 'tags',
        type: { kind: 'map', values: { kind: 'unknown' } },
        required: true,
        nullable: false,
      },
    ],
  };
}

/** An event whose data is the resource. */
function thingCreatedEventModel(): Model {
  return {
    name: 'ThingCreatedEvent',
    role: 'event',
    fields: [
      { name: 'id', camel: 'id', type: { kind: 'string' }, required: true, nullable: false },
      {
        name: 'type',
        camel: 'type',
        type: { kind: 'literal', value: 'thing.created' },
        required: true,
        nullable: false,
      },
      {
        name: 'data',
        camel: 'data',
        type: { kind: 'model', name: 'Thing' },
        required: true,
        nullable: false,
      },
    ],
  };
}

/** An input with a nullable default and an optional date-time. */
function thingCreateModel(): Model {
  return {
    name: 'ThingCreate',
    role: 'input',
    fields: [
      {
        name: 'status',
        camel: 'status',
        type: { kind: 'enum', name: 'ThingStatus' },
        required: true,
        nullable: false,
      },
      {
        name: 'class',
        camel: 'class',
        type: { kind: 'string' },
        required: false,
        nullable: true,
        default: 'x',
      },
      {
        name: 'when',
        camel: 'when',
        type: { kind: 'string', format: 'date-time' },
        required: false,
        nullable: false,
      },
    ],
  };
}

function withOperations(m: SdkModel): SdkModel {
  const base = {
    resource: { camel: 'things', snake: 'things' },
    scope: 'things:read',
    summary: 'S',
  };
  const ops: SdkModel['operations'] = [
    {
      ...base,
      id: 'things.list',
      method: { camel: 'list', snake: 'list' },
      http: 'GET',
      path: '/v1/things',
      pathParams: [],
      query: [
        {
          name: 'status',
          camel: 'status',
          kind: 'scalar',
          type: { kind: 'string' },
          required: false,
          enumValues: ['new', 'done'],
        },
        {
          name: 'created_at',
          camel: 'createdAt',
          kind: 'range',
          type: { kind: 'string', format: 'date-time' },
          operators: ['gte', 'lt'],
          required: false,
        },
      ],
      response: { kind: 'page', model: 'ThingList', item: 'Thing' },
      idempotent: false,
    },
    {
      ...base,
      id: 'things.create',
      method: { camel: 'create', snake: 'create' },
      http: 'POST',
      path: '/v1/things',
      pathParams: [],
      query: [],
      body: { model: 'ThingCreate', required: true },
      response: { kind: 'model', model: 'Thing' },
      idempotent: true,
    },
    {
      ...base,
      id: 'things.markDone',
      method: { camel: 'markDone', snake: 'mark_done' },
      http: 'POST',
      path: '/v1/things/{id}/mark_done',
      pathParams: ['id'],
      query: [],
      response: { kind: 'none' },
      idempotent: true,
    },
    {
      ...base,
      id: 'things.event',
      method: { camel: 'event', snake: 'event' },
      http: 'GET',
      path: '/v1/things/{id}/event',
      pathParams: ['id'],
      query: [],
      response: { kind: 'model', model: 'Event' },
      idempotent: false,
    },
  ];
  return {
    ...m,
    operations: ops,
    resources: [{ camel: 'things', snake: 'things', pascal: 'Things', operations: ops }],
  };
}

const file = (files: Map<string, string>, rel: string) => {
  const content = files.get(`${PYTHON_ROOT}/${rel}`);
  if (content === undefined) throw new Error(`not emitted: ${rel}`);
  return content;
};

describe('emitPython', () => {
  const files = emitPython(withOperations(model()));

  it('writes the generated folders and the operation list, each marked as generated', () => {
    expect([...files.keys()].sort()).toEqual(
      [
        '_operations.py',
        'resources/__init__.py',
        'resources/things.py',
        'types/__init__.py',
        'types/enums.py',
        'types/models.py',
        'types/params.py',
      ].map((rel) => `${PYTHON_ROOT}/${rel}`),
    );
    for (const content of files.values())
      expect(content.startsWith('# Generated by @platform/sdk-codegen')).toBe(true);
    const operations = file(files, '_operations.py');
    for (const id of ['things.list', 'things.create', 'things.markDone', 'things.event']) {
      expect(operations).toContain(`OperationInfo("${id}"`);
    }
    expect(operations).toContain('TOKEN_PATH: _t.Final = "/oauth/token"');
  });

  it('is deterministic', () => {
    expect(emitPython(withOperations(model()))).toEqual(files);
  });

  it('gives keywords and reserved names a trailing underscore and keeps the JSON name', () => {
    const models = file(files, 'types/models.py');
    expect(models).toContain('    from_: _t.Optional[str]\n');
    expect(models).toContain('    to_dict_: _t.Optional[int]\n');
    expect(models).toContain('("from_", "from")');
    expect(models).toContain('from_=json_get(raw, "from")');
  });

  it('types enums open on output and closed on input', () => {
    expect(file(files, 'types/models.py')).toContain('    status: _t.Union[ThingStatus, str]\n');
    expect(file(files, 'types/enums.py')).toContain('ThingStatus = _t.Literal["new", "done"]');
    const things = file(files, 'resources/things.py');
    expect(things).toContain('        status: ThingStatus,\n');
    expect(things).toContain(
      'status: _t.Union[ThingStatus, _t.Sequence[ThingStatus], Omit] = omit',
    );
    expect(things).toContain('created_at: _t.Union[DateTimeRange, Omit] = omit');
  });

  it('makes optional body fields `omit` by default and path parameters positional', () => {
    const things = file(files, 'resources/things.py');
    expect(things).toContain('        class_: _t.Union[_t.Optional[str], Omit] = omit,\n');
    expect(things).toContain('"class": class_,');
    expect(things).toContain('        when: _t.Union[_dt.datetime, str, Omit] = omit,\n');
    expect(things).toMatch(/def mark_done\(\n {8}self,\n {8}id: str,\n {8}\*,\n/);
    expect(things).toContain(`f"/v1/things/{path_param('id', id)}/mark_done"`);
    expect(things).toContain('cast=parse_none');
  });

  it('generates a raw twin for every method, and the plain method parses it', () => {
    const things = file(files, 'resources/things.py');
    for (const name of ['list', 'create', 'mark_done', 'event']) {
      expect(things.match(new RegExp(`    def ${name}\\(`, 'g'))).toHaveLength(2);
      expect(things).toContain(`return self.with_raw_response.${name}(`);
    }
    expect(things).toContain('-> APIResponse[SyncPage[Thing]]:');
    expect(things).toContain('-> APIResponse[Event]:');
  });

  it('parses a union by its discriminator with an Unknown fallback', () => {
    const models = file(files, 'types/models.py');
    expect(models).toContain('class UnknownEvent(BaseModel):');
    expect(models).toContain('Event = _t.Union[\n    ThingCreatedEvent,\n    UnknownEvent,\n]');
    expect(models).toContain('"thing.created": ThingCreatedEvent.from_json,');
    expect(models).toContain('    type: str\n'); // the fallback's discriminator is any string
  });

  it('writes TypedDicts in the 3.9 form (functional when a key is a keyword)', () => {
    const params = file(files, 'types/params.py');
    expect(params).toContain(
      '_ThingCreateParamsRequired = _t.TypedDict("_ThingCreateParamsRequired", {"status": ThingStatus})',
    );
    expect(params).toContain('class DateTimeRange(_t.TypedDict, total=False):');
    expect(params).not.toContain('NotRequired');
  });

  it('refuses a resource that would shadow a client attribute', () => {
    const clash = withOperations(model());
    clash.resources = [{ ...clash.resources[0]!, snake: 'webhooks' }];
    expect(() => emitPython(clash)).toThrow(/clashes with a PlatformClient attribute/);
  });

  it('writes TypedDicts Python 3.9 reads with the right required keys', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'emit-python-'));
    try {
      const types = path.join(dir, 'pkg', 'types');
      mkdirSync(types, { recursive: true });
      writeFileSync(path.join(dir, 'pkg', '__init__.py'), '');
      writeFileSync(path.join(types, '__init__.py'), '');
      writeFileSync(path.join(types, 'enums.py'), file(files, 'types/enums.py'));
      writeFileSync(path.join(types, 'params.py'), file(files, 'types/params.py'));
      const check =
        'import pkg.types.params as p; ' +
        'assert p.ThingCreateParams.__required_keys__ == {"status"}, p.ThingCreateParams.__required_keys__; ' +
        'assert p.ThingCreateParams.__optional_keys__ == {"class", "when"}; ' +
        'assert p.DateTimeRange.__optional_keys__ == {"gte", "gt", "lte", "lt"}';
      execFileSync('python3', ['-c', check], { cwd: dir, stdio: 'pipe' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('emits Python that compiles', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'emit-python-'));
    try {
      for (const [rel, content] of files) {
        const target = path.join(dir, rel);
        mkdirSync(path.dirname(target), { recursive: true });
        writeFileSync(target, content);
      }
      execFileSync('python3', ['-m', 'compileall', '-q', dir], { stdio: 'pipe' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
