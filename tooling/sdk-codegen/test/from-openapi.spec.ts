import { loadModel } from '../src/generate';

describe('the SDK model read from the OpenAPI document', () => {
  const model = loadModel();
  const operation = (id: string) => model.operations.find((o) => o.id === id)!;
  const modelNamed = (name: string) => model.models.find((m) => m.name === name)!;

  it('has every operation once, grouped by resource, with snake_case names for Python', () => {
    expect(new Set(model.operations.map((o) => o.id)).size).toBe(model.operations.length);
    const rotate = operation('webhookEndpoints.rotateSecret');
    expect(rotate.resource).toEqual({ camel: 'webhookEndpoints', snake: 'webhook_endpoints' });
    expect(rotate.method).toEqual({ camel: 'rotateSecret', snake: 'rotate_secret' });
    expect(rotate.pathParams).toEqual(['id']);
    expect(rotate.idempotent).toBe(true);
    expect(
      model.resources.flatMap((r) => r.operations).filter((o) => o.aliasOf === undefined),
    ).toEqual(model.operations);
  });

  it('puts an operation under its x-sdk-name, and keeps its contract key as a deprecated alias', () => {
    const feed = operation('events.changes');
    expect([feed.resource.camel, feed.method.camel, feed.path]).toEqual([
      'changes',
      'list',
      '/v1/changes',
    ]);
    expect(feed.feed).toEqual({ item: 'Event' });
    expect(feed.deprecated).toBeUndefined();
    const events = model.resources.find((r) => r.camel === 'events')!;
    const alias = events.operations.find((o) => o.method.camel === 'changes')!;
    expect(alias).toMatchObject({ path: '/v1/changes', aliasOf: 'changes.list', feed: feed.feed });
    expect(alias.deprecated).toEqual({ replacement: '`changes.list`' });
    // One entry per route in the operation tables and the reference: the alias is in none.
    expect(model.operations.filter((o) => o.path === '/v1/changes')).toEqual([feed]);
  });

  it('groups range filters into one parameter and keeps the values of enum filters', () => {
    const list = operation('students.list');
    expect(list.response).toEqual({ kind: 'page', model: 'StudentList', item: 'Student' });
    const createdAt = list.query.find((q) => q.name === 'created_at')!;
    expect(createdAt.kind).toBe('range');
    expect(createdAt.operators!.sort()).toEqual(['gt', 'gte', 'lt', 'lte']);
    expect(list.query.find((q) => q.name === 'status')!.enumValues).toEqual([
      'active',
      'inactive',
      'graduated',
      'withdrawn',
    ]);
    expect(list.query.map((q) => q.name)).not.toContain('created_at[gte]');
  });

  it('types nullable fields, enums, nested models and the event union', () => {
    const student = modelNamed('Student');
    const email = student.fields.find((f) => f.name === 'email')!;
    expect(email).toMatchObject({
      nullable: true,
      required: true,
      type: { kind: 'string', format: 'email' },
    });
    expect(student.fields.find((f) => f.name === 'status')!.type).toEqual({
      kind: 'enum',
      name: 'StudentStatus',
    });
    expect(student.fields.find((f) => f.name === 'object')!.type).toEqual({
      kind: 'literal',
      value: 'student',
    });
    const event = model.unions.find((u) => u.name === 'Event')!;
    expect(event.discriminator).toBe('type');
    expect(event.members).toHaveLength(model.events.length);
    expect(model.events.find((e) => e.type === 'student.created')).toEqual({
      type: 'student.created',
      model: 'StudentCreatedEvent',
      data: 'Student',
      scope: 'students:read',
    });
    expect(operation('events.retrieve').response).toEqual({ kind: 'model', model: 'Event' });
    expect(modelNamed('WebhookEndpoint').fields.find((f) => f.name === 'owner')).toMatchObject({
      nullable: true,
      type: { kind: 'model', name: 'WebhookEndpointOwner' },
    });
  });

  it('marks request bodies and their roles, and names the token endpoint', () => {
    expect(operation('students.create').body).toEqual({ model: 'StudentCreate', required: true });
    expect(operation('students.update').body).toEqual({ model: 'StudentUpdate', required: false });
    expect(modelNamed('StudentCreate').role).toBe('input');
    expect(modelNamed('Problem').role).toBe('problem');
    expect(operation('students.delete').response).toEqual({
      kind: 'model',
      model: 'DeletedStudent',
    });
    expect(model.tokenPath).toBe('/oauth/token');
    expect(model.enums.find((e) => e.name === 'Scope')!.values).toEqual(model.scopes);
  });
});
