/**
 * `GET /v1/organization` (plan, limit and how much of the window is used) and
 * `PATCH /v1/organization` (the name only: plan and limit are an operator's).
 */
import { call, client, startServer, type TestServer } from './support/server';

describe('the organization API', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(() => server.close());

  it('shows name, plan, and the rate limit with the current window, as the headers count it', async () => {
    const org = await server.createOrganization({ name: 'Window School' });
    const { token } = await server.createToken(org.id, ['organization:read', 'students:read']);
    const api = client(server, token);
    const first = await api.get('/v1/organization');
    expect(first.status).toBe(200);
    expect(first.body).toEqual({
      id: org.id,
      object: 'organization',
      name: 'Window School',
      plan: 'standard',
      rate_limit: {
        limit_per_minute: 600,
        used: 1,
        remaining: 599,
        resets_at: expect.any(String),
      },
      created_at: org.createdAt.toISOString(),
      updated_at: org.updatedAt.toISOString(),
    });
    const resetsAt = Date.parse(first.body.rate_limit.resets_at);
    expect(resetsAt).toBeGreaterThan(Date.now());
    expect(resetsAt).toBeLessThanOrEqual(Date.now() + 60_000);

    // Every token of the organization spends the one budget.
    const other = await server.createToken(org.id, ['students:read']);
    await client(server, other.token).get('/v1/students');
    await api.get('/v1/students');
    const later = await api.get('/v1/organization');
    expect(later.body.rate_limit).toMatchObject({ used: 4, remaining: 596 });
    expect(later.headers.get('x-ratelimit-remaining')).toBe('596');
    expect(later.headers.get('x-ratelimit-limit')).toBe('600');
  });

  it('shows an enterprise limit', async () => {
    const org = await server.createOrganization({ plan: 'enterprise', rateLimitPerMinute: 6000 });
    const { token } = await server.createToken(org.id, ['organization:read']);
    const res = await client(server, token).get('/v1/organization');
    expect(res.body).toMatchObject({
      plan: 'enterprise',
      rate_limit: { limit_per_minute: 6000, used: 1, remaining: 5999 },
    });
  });

  it('renames the organization, audited, and refuses plan and limit as operator-only', async () => {
    const org = await server.createOrganization({ name: 'Old Name' });
    const { token } = await server.createToken(org.id, [
      'organization:read',
      'organization:write',
      'audit_log:read',
    ]);
    const api = client(server, token);
    const renamed = await api.patch('/v1/organization', { name: 'New Name' });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ id: org.id, name: 'New Name', plan: 'standard' });
    expect(Date.parse(renamed.body.updated_at)).toBeGreaterThan(org.updatedAt.getTime() - 1);
    expect((await api.get('/v1/organization')).body.name).toBe('New Name');

    const plan = await api.patch('/v1/organization', { plan: 'enterprise' });
    expect(plan.status).toBe(400);
    expect(plan.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(plan.body.detail).toMatch(/plan cannot be changed over the API.*operator/);
    expect(plan.body.errors).toEqual([expect.objectContaining({ path: 'body.plan' })]);
    const limit = await api.patch('/v1/organization', {
      name: 'Sneaky',
      rate_limit: { limit_per_minute: 6000 },
    });
    expect(limit.status).toBe(400);
    expect(limit.body.errors).toEqual([expect.objectContaining({ path: 'body.rate_limit' })]);
    expect((await api.patch('/v1/organization', { name: '' })).status).toBe(400);
    const unknown = await api.patch('/v1/organization', { name: 'X', colour: 'red' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.detail).toMatch(/colour/);
    // Nothing of the refused requests was applied.
    expect((await api.get('/v1/organization')).body).toMatchObject({
      name: 'New Name',
      plan: 'standard',
      rate_limit: { limit_per_minute: 600 },
    });

    const events = await api.get('/v1/audit_events?target_type=organization');
    expect(events.body.data).toEqual([
      expect.objectContaining({
        action: 'organization.updated',
        target: { type: 'organization', id: org.id },
        changes: { name: ['Old Name', 'New Name'] },
      }),
    ]);
  });

  it('needs organization:read to read and organization:write to rename', async () => {
    const org = await server.createOrganization();
    const reader = await server.createToken(org.id, ['organization:read']);
    const none = await server.createToken(org.id, ['students:read']);
    expect((await call(server, '/v1/organization', { token: none.token })).status).toBe(403);
    const refused = await client(server, reader.token).patch('/v1/organization', { name: 'X' });
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('insufficient_scope');
    expect((await call(server, '/v1/organization')).status).toBe(401);
  });
});
