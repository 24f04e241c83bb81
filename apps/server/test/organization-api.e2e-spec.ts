/**
 * `GET /v1/organization` (plan, limit and how much of the window is used) and
 * `PATCH /v1/organization` (the name only: plan and limit are an operator's).
 */
import { expectStatus, typedClient } from './support/api';
import { problemOf, rawClient, startServer, type TestServer } from './support/server';

describe('the organization API', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(() => server.close());

  it('shows name, plan, and the rate limit with the current window, as the headers count it', async () => {
    const org = await server.createOrganization({ name: 'Window School' });
    const { token } = await server.createToken(org.id, ['organization:read', 'students:read']);
    const api = typedClient(server, token);
    const first = expectStatus(await api.organization.retrieve(), 200);
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
    await typedClient(server, other.token).students.list();
    await api.students.list();
    const later = expectStatus(await api.organization.retrieve(), 200);
    expect(later.body.rate_limit).toMatchObject({ used: 4, remaining: 596 });
    expect(later.headers.get('x-ratelimit-remaining')).toBe('596');
    expect(later.headers.get('x-ratelimit-limit')).toBe('600');
  });

  it('shows an enterprise limit', async () => {
    const org = await server.createOrganization({ plan: 'enterprise', rateLimitPerMinute: 6000 });
    const { token } = await server.createToken(org.id, ['organization:read']);
    const res = expectStatus(await typedClient(server, token).organization.retrieve(), 200);
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
    const api = typedClient(server, token);
    /** For what the contract's types refuse: operator-only and unknown fields. */
    const raw = rawClient(server, token);
    const renamed = expectStatus(
      await api.organization.update({ body: { name: 'New Name' } }),
      200,
    );
    expect(renamed.body).toMatchObject({ id: org.id, name: 'New Name', plan: 'standard' });
    expect(Date.parse(renamed.body.updated_at)).toBeGreaterThan(org.updatedAt.getTime() - 1);
    expect(expectStatus(await api.organization.retrieve(), 200).body.name).toBe('New Name');

    const plan = await raw.patch('/v1/organization', { plan: 'enterprise' });
    expect(plan.status).toBe(400);
    expect(plan.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(problemOf(plan).detail).toMatch(/plan cannot be changed over the API.*operator/);
    expect(problemOf(plan).errors).toEqual([expect.objectContaining({ path: 'body.plan' })]);
    const limit = await raw.patch('/v1/organization', {
      name: 'Sneaky',
      rate_limit: { limit_per_minute: 6000 },
    });
    expect(limit.status).toBe(400);
    expect(problemOf(limit).errors).toEqual([expect.objectContaining({ path: 'body.rate_limit' })]);
    expect((await api.organization.update({ body: { name: '' } })).status).toBe(400);
    const unknown = await raw.patch('/v1/organization', { name: 'X', colour: 'red' });
    expect(unknown.status).toBe(400);
    expect(problemOf(unknown).detail).toMatch(/colour/);
    // Nothing of the refused requests was applied.
    expect((await api.organization.retrieve()).body).toMatchObject({
      name: 'New Name',
      plan: 'standard',
      rate_limit: { limit_per_minute: 600 },
    });

    const events = expectStatus(
      await api.auditEvents.list({ query: { target_type: 'organization' } }),
      200,
    );
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
    expect((await typedClient(server, none.token).organization.retrieve()).status).toBe(403);
    const refused = expectStatus(
      await typedClient(server, reader.token).organization.update({ body: { name: 'X' } }),
      403,
    );
    expect(refused.body.code).toBe('insufficient_scope');
    expect((await typedClient(server).organization.retrieve()).status).toBe(401);
  });
});
