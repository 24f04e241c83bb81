/**
 * The operators' organization commands (`orgs:list`, `orgs:show`, `orgs:update`,
 * `audit:prune`) and `seed --rate-limit` on an existing demo organization, through the CLI's
 * commands run in this process (test/support/cli.ts; the binary's wiring is cli-binary's); and
 * the proof from issue 15: a limit raised while the server runs applies to its next response.
 */
import { AuditEventRecord } from '../src/audit/audit-event.entity';
import { DEMO_ORGANIZATION_ID } from '../src/seed/seed.constants';
import { runPlatform } from './support/cli';
import { expectStatus, typedClient } from './support/api';
import { startServer, type TestServer } from './support/server';

function databaseUrlOf(server: TestServer): string {
  const { database } = server.config;
  return database.type === 'sqlite' ? `sqlite:${database.path}` : database.url;
}

/** Runs the CLI against the server's database. */
function platform(server: TestServer, ...args: string[]) {
  return runPlatform({ env: { DATABASE_URL: databaseUrlOf(server) } }, ...args);
}

/** `--json` output must be one JSON document and nothing else. */
function pureJson(output: { stdout: string }): any {
  expect(output.stdout.trim().startsWith('{')).toBe(true);
  return JSON.parse(output.stdout);
}

/**
 * The updates `orgs:update` refuses on an enterprise organization above 600/min: a downgrade
 * that would break the plan's rule, nothing to change, an unknown plan and a zero limit.
 */
async function expectRefusedUpdates(server: TestServer, id: string) {
  const downgrade = await platform(server, 'orgs:update', '--id', id, '--plan', 'standard');
  expect(downgrade.code).toBe(1);
  expect(downgrade.stderr).toMatch(
    /needs the enterprise plan \(this organization would be on standard\)/,
  );
  const nothing = await platform(server, 'orgs:update', '--id', id);
  expect(nothing.code).toBe(1);
  expect(nothing.stderr).toMatch(/nothing to change: give --name, --plan or --rate-limit/);
  const badPlan = await platform(server, 'orgs:update', '--id', id, '--plan', 'gold');
  expect(badPlan.code).toBe(1);
  expect(badPlan.stderr).toMatch(/Allowed choices are standard, enterprise/);
  const badLimit = await platform(server, 'orgs:update', '--id', id, '--rate-limit', '0');
  expect(badLimit.code).toBe(1);
  expect(badLimit.stderr).toMatch(/must be a positive integer/);
}

describe('pnpm platform orgs:* (operators)', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(() => server.close());

  it('lists and shows organizations, as pure JSON with --json', async () => {
    const a = await server.createOrganization({ name: 'Alpha School' });
    const b = await server.createOrganization({
      name: 'Beta School',
      plan: 'enterprise',
      rateLimitPerMinute: 2000,
    });
    const list = await platform(server, 'orgs:list', '--json');
    expect(list.code).toBe(0);
    const { data } = pureJson(list);
    expect(data).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          id: a.id,
          object: 'organization',
          name: 'Alpha School',
          plan: 'standard',
          rate_limit_per_minute: 600,
        }),
        expect.objectContaining({ id: b.id, plan: 'enterprise', rate_limit_per_minute: 2000 }),
      ]),
    );
    const shown = await platform(server, 'orgs:show', '--id', b.id, '--json');
    expect(pureJson(shown)).toEqual({
      id: b.id,
      object: 'organization',
      name: 'Beta School',
      plan: 'enterprise',
      rate_limit_per_minute: 2000,
      created_at: b.createdAt.toISOString(),
      updated_at: b.updatedAt.toISOString(),
    });
    const text = await platform(server, 'orgs:list');
    expect(text.stdout).toContain(`${b.id}  Beta School  enterprise  2000 requests/min`);

    const missing = await platform(server, 'orgs:show', '--id', 'org_nope', '--json');
    expect(missing.code).toBe(1);
    expect(pureJson(missing).error.message).toMatch(/No organization org_nope/);
  });

  it('updates name, plan and limit with the create rules, and audits each change as an operator', async () => {
    const org = await server.createOrganization({ name: 'Gamma School' });
    const raisedOnStandard = await platform(
      server,
      'orgs:update',
      '--id',
      org.id,
      '--rate-limit',
      '700',
      '--json',
    );
    expect(raisedOnStandard.code).toBe(1);
    expect(pureJson(raisedOnStandard).error.message).toMatch(
      /a rate limit above 600\/min needs the enterprise plan/,
    );
    const lowered = await platform(server, 'orgs:update', '--id', org.id, '--rate-limit', '100');
    expect(lowered.code).toBe(0);
    expect(lowered.stdout).toContain('100 requests/min');

    const raised = await platform(
      server,
      'orgs:update',
      '--id',
      org.id,
      '--plan',
      'enterprise',
      '--rate-limit',
      '6000',
      '--name',
      'Gamma Academy',
      '--json',
    );
    expect(raised.code).toBe(0);
    expect(pureJson(raised)).toMatchObject({
      id: org.id,
      name: 'Gamma Academy',
      plan: 'enterprise',
      rate_limit_per_minute: 6000,
    });

    // Back to standard while above 600/min would break the rule: refused, nothing changed.
    await expectRefusedUpdates(server, org.id);
    expect(pureJson(await platform(server, 'orgs:show', '--id', org.id, '--json'))).toMatchObject({
      plan: 'enterprise',
      rate_limit_per_minute: 6000,
    });

    const events = await server.dataSource
      .getRepository(AuditEventRecord)
      .find({ where: { organizationId: org.id }, order: { id: 'ASC' } });
    expect(
      events.map((e) => [e.action, e.actorType, e.credentialId, e.ip, JSON.parse(e.changes!)]),
    ).toEqual([
      [
        'organization.rate_limit_changed',
        'operator',
        null,
        null,
        { rate_limit_per_minute: [600, 100] },
      ],
      ['organization.updated', 'operator', null, null, { name: ['Gamma School', 'Gamma Academy'] }],
      ['organization.plan_changed', 'operator', null, null, { plan: ['standard', 'enterprise'] }],
      [
        'organization.rate_limit_changed',
        'operator',
        null,
        null,
        { rate_limit_per_minute: [100, 6000] },
      ],
    ]);
  });

  it('applies a raised limit from the next request, while the server runs (issue 15)', async () => {
    const org = await server.createOrganization({ name: 'Growing School' });
    const { token } = await server.createToken(org.id, ['students:read', 'organization:read']);
    const api = typedClient(server, token);
    const before = await api.students.list();
    expect(before.headers.get('x-ratelimit-limit')).toBe('600');
    const raised = await platform(
      server,
      'orgs:update',
      '--id',
      org.id,
      '--plan',
      'enterprise',
      '--rate-limit',
      '6000',
      '--json',
    );
    expect(raised.code).toBe(0);
    const after = await api.students.list();
    expect(after.status).toBe(200);
    expect(after.headers.get('x-ratelimit-limit')).toBe('6000');
    // The requests already made in the window still count.
    expect(after.headers.get('x-ratelimit-remaining')).toBe('5998');
    const shown = expectStatus(await api.organization.retrieve(), 200);
    expect(shown.body).toMatchObject({
      plan: 'enterprise',
      rate_limit: { limit_per_minute: 6000, used: 3, remaining: 5997 },
    });
  });

  it('seed --rate-limit applies to an existing demo organization instead of being ignored', async () => {
    const first = pureJson(await platform(server, 'seed', '--students', '3', '--json'));
    expect(first).toMatchObject({
      organization_id: DEMO_ORGANIZATION_ID,
      organization_created: true,
      rate_limit_per_minute: 600,
    });
    const again = await platform(
      server,
      'seed',
      '--students',
      '3',
      '--rate-limit',
      '3000',
      '--json',
    );
    expect(again.code).toBe(0);
    expect(pureJson(again)).toMatchObject({
      organization_created: false,
      rate_limit_per_minute: 3000,
    });
    expect(
      pureJson(await platform(server, 'orgs:show', '--id', DEMO_ORGANIZATION_ID, '--json')),
    ).toMatchObject({ plan: 'enterprise', rate_limit_per_minute: 3000 });
    const res = await typedClient(server, first.token).students.list();
    expect(res.headers.get('x-ratelimit-limit')).toBe('3000');
    const text = await platform(server, 'seed', '--students', '3', '--rate-limit', '4000');
    expect(text.stdout).toContain('Rate limit: 4000 requests/min (enterprise)');
  });

  it('audit:prune deletes only entries past retention', async () => {
    const org = await server.createOrganization();
    const day = 86_400_000;
    const repo = server.dataSource.getRepository(AuditEventRecord);
    const row = (id: string, daysAgo: number) => ({
      id,
      organizationId: org.id,
      actorType: 'operator' as const,
      credentialId: null,
      userId: null,
      action: 'organization.updated',
      targetType: 'organization',
      targetId: org.id,
      changes: null,
      ip: null,
      createdAt: new Date(Date.now() - daysAgo * day),
    });
    await repo.insert([
      row('aud_01JD6Y3ZK8R5V2N3M4P5Q6R7SA', 400),
      row('aud_01JD6Y3ZK8R5V2N3M4P5Q6R7SB', 100),
    ]);
    const pruned = await platform(server, 'audit:prune', '--json');
    expect(pureJson(pruned)).toEqual({ deleted: 1 });
    expect((await repo.findBy({ organizationId: org.id })).map((e) => e.id)).toEqual([
      'aud_01JD6Y3ZK8R5V2N3M4P5Q6R7SB',
    ]);
    // With a retention of 90 days, the 100-day-old entry goes too; below 90 is refused.
    const shorter = await runPlatform(
      { env: { DATABASE_URL: databaseUrlOf(server), AUDIT_RETENTION_DAYS: '90' } },
      'audit:prune',
      '--json',
    );
    expect(shorter.code).toBe(0);
    expect(JSON.parse(shorter.stdout)).toEqual({ deleted: 1 });
    const refused = await runPlatform(
      { env: { DATABASE_URL: databaseUrlOf(server), AUDIT_RETENTION_DAYS: '30' } },
      'audit:prune',
      '--json',
    );
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stdout).error.message).toMatch(
      /AUDIT_RETENTION_DAYS: must be at least 90/,
    );
  });
});
