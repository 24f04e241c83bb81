import { randomUUID } from 'node:crypto';
import {
  contract,
  RESOURCE_NAMES,
  RESOURCES,
  resourceContractKey,
  SANDBOX_LIMIT,
  type Sandbox,
  type Scope,
  TRIGGER_EVENT_TYPES,
} from '@platform/contract';
import { Webhook } from 'standardwebhooks';
import { startReceiver, waitFor } from './support/receiver';
import { eventsOf, problemOf, rawClient, startServer, type TestServer } from './support/server';

type Row = { id: string; [field: string]: unknown };
type List<T = Row> = { data: T[]; meta: { total: number } };

describe('sandbox organizations (/v1/sandboxes) and the trigger', () => {
  let server: TestServer;
  let orgId: string;
  let admin: ReturnType<typeof rawClient>;
  let adminUserId: string;

  beforeAll(async () => {
    server = await startServer({
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      WEBHOOK_POLL_INTERVAL: '100ms',
    });
  });
  afterAll(() => server.close());
  const afterTest: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const close of afterTest.splice(0)) await close();
  });

  beforeEach(async () => {
    orgId = (await server.createOrganization({ name: 'Live School' })).id;
    ({ id: adminUserId } = await server.createUser(
      orgId,
      `admin-${randomUUID()}@s.test`,
      'pw-long-enough-1',
      {
        role: 'admin',
      },
    ));
    const { token } = await server.createToken(orgId, ['all'], { userId: adminUserId });
    admin = rawClient(server, token);
  });

  const createSandbox = async (body: object = { name: 'Dev', students: 40, seed: 7 }) => {
    const res = await admin.post<Sandbox>('/v1/sandboxes', body);
    expect(res.status).toBe(201);
    return res.body;
  };
  /** A member's `pat_test_` token of the sandbox. */
  const sandboxToken = async (sandboxId: string, as = admin, scopes: string[] = ['all']) => {
    const res = await as.post<{ token: string; prefix: string }>(
      `/v1/sandboxes/${sandboxId}/tokens`,
      { name: 'integration', scopes },
    );
    expect(res.status).toBe(201);
    return res.body;
  };
  const count = async (client: ReturnType<typeof rawClient>, path: string) =>
    (await client.get<List>(`${path}?per_page=1`)).body.meta.total;
  /** A database trigger that aborts every insert of the organization's rows into `table`. */
  const refuseInserts = async (table: string, organizationId: string) => {
    const refusal = `refused by the test for ${organizationId}`;
    if (server.dataSource.options.type === 'postgres') {
      await server.dataSource.query(
        `CREATE FUNCTION refuse_${table}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF NEW.organization_id = '${organizationId}' THEN RAISE EXCEPTION '${refusal}'; END IF; RETURN NEW; END $$`,
      );
      await server.dataSource.query(
        `CREATE TRIGGER refuse_${table} BEFORE INSERT ON ${table} FOR EACH ROW EXECUTE FUNCTION refuse_${table}()`,
      );
    } else {
      await server.dataSource.query(
        `CREATE TRIGGER refuse_${table} BEFORE INSERT ON ${table} WHEN NEW.organization_id = '${organizationId}' BEGIN SELECT RAISE(ABORT, '${refusal}'); END`,
      );
    }
  };
  const allowInserts = async (table: string) => {
    if (server.dataSource.options.type === 'postgres') {
      await server.dataSource.query(`DROP TRIGGER refuse_${table} ON ${table}`);
      await server.dataSource.query(`DROP FUNCTION refuse_${table}()`);
    } else {
      await server.dataSource.query(`DROP TRIGGER refuse_${table}`);
    }
  };

  it('creates a seeded sandbox with its own pat_test_ tokens, isolated from its parent both ways', async () => {
    const liveStudent = (await server.insertStudents(orgId, 3))[0]!;
    const sandbox = await createSandbox();
    expect(sandbox).toMatchObject({
      object: 'sandbox',
      name: 'Dev',
      parent_id: orgId,
      students: 40,
      seed: 7,
      reset_at: null,
    });
    expect((await admin.get<List<Sandbox>>('/v1/sandboxes')).body.data.map((s) => s.id)).toEqual([
      sandbox.id,
    ]);

    const { token, prefix } = await sandboxToken(sandbox.id);
    expect(token).toMatch(/^pat_test_[0-9A-Za-z]{36}$/);
    expect(prefix).toBe(token.slice(0, 16));
    const sandboxed = rawClient(server, token);
    expect((await sandboxed.get<{ id: string }>('/v1/organization')).body.id).toBe(sandbox.id);
    expect(await count(sandboxed, '/v1/students')).toBe(40);
    expect(await count(sandboxed, '/v1/enrollments')).toBeGreaterThan(0);
    expect(await count(admin, '/v1/students')).toBe(3);

    // Neither reaches the other's records.
    expect((await sandboxed.get(`/v1/students/${liveStudent.id}`)).status).toBe(404);
    const sandboxStudent = (await sandboxed.get<List>('/v1/students?per_page=1')).body.data[0]!;
    expect((await admin.get(`/v1/students/${sandboxStudent.id}`)).status).toBe(404);
    expect(
      (await admin.patch(`/v1/students/${sandboxStudent.id}`, { first_name: 'X' })).status,
    ).toBe(404);
    // In every collection of the registry, the parent neither reads, changes nor lists the
    // sandbox's records, and what it tries leaves them as they were.
    for (const name of RESOURCE_NAMES) {
      const [record] = (await sandboxed.get<List>(`/v1/${name}?per_page=1`)).body.data;
      expect({ name, seeded: record !== undefined }).toEqual({ name, seeded: true });
      const path = `/v1/${name}/${record!.id}`;
      const updates = 'update' in contract[resourceContractKey(name)];
      const tries = [await admin.get(path), ...(updates ? [await admin.patch(path, {})] : [])];
      expect({ name, statuses: tries.map((r) => r.status) }).toEqual({
        name,
        statuses: updates ? [404, 404] : [404],
      });
      const live = (await admin.get<List>(`/v1/${name}?per_page=100`)).body.data.map((r) => r.id);
      expect(live).not.toContain(record!.id);
      expect((await sandboxed.get(path)).body).toEqual(record);
    }
    // Nor refers to the other's records.
    const course = (await sandboxed.get<List>('/v1/courses?per_page=1&status=active')).body
      .data[0]!;
    const crossing = await sandboxed.post('/v1/enrollments', {
      student_id: liveStudent.id,
      course_id: course.id,
    });
    expect(crossing.status).toBe(400);
    expect(problemOf(crossing).errors?.map((e) => e.path)).toEqual(['body.student_id']);
    // A sandbox has no sandboxes, and its token manages none of its parent's.
    expect((await sandboxed.post('/v1/sandboxes', { name: 'Nested' })).status).toBe(409);
    expect((await sandboxed.get(`/v1/sandboxes/${sandbox.id}`)).status).toBe(404);
    // Events: none from seeding, in either organization.
    expect(await eventsOf(server, sandbox.id)).toEqual([]);
  });

  it('the same seed and size give the same school; reset brings it back, delete removes it all', async () => {
    const a = await createSandbox({ name: 'A', students: 25, seed: 3 });
    const b = await createSandbox({ name: 'B', students: 25, seed: 3 });
    const c = await createSandbox({ name: 'C', students: 25, seed: 4 });
    const names = async (id: string) => {
      const client = rawClient(server, (await sandboxToken(id)).token);
      const res = await client.get<List>('/v1/students?per_page=100&sort=last_name,first_name');
      return res.body.data.map((s) => `${s.first_name as string} ${s.last_name as string}`);
    };
    expect(await names(a.id)).toEqual(await names(b.id));
    expect(await names(a.id)).not.toEqual(await names(c.id));

    const client = rawClient(server, (await sandboxToken(a.id)).token);
    const before = await names(a.id);
    const counts = async () =>
      Object.fromEntries(
        await Promise.all(
          RESOURCE_NAMES.map(async (name) => [name, await count(client, `/v1/${name}`)] as const),
        ),
      );
    const seeded = await counts();
    // A record more in every collection of the registry.
    for (const name of RESOURCE_NAMES) {
      const made = await client.post('/v1/sandbox/trigger', {
        event: `${RESOURCES[name].singular}.created`,
      });
      expect(made.status).toBe(201);
    }
    const added = await counts();
    for (const name of RESOURCE_NAMES) expect(added[name]).toBe(seeded[name]! + 1);

    // A reset that fails half-way (the database refuses its last table's rows) changes nothing.
    await refuseInserts('exam_results', a.id);
    expect(seeded.exam_results).toBeGreaterThan(0);
    const failed = await admin.post(`/v1/sandboxes/${a.id}/reset`);
    expect(failed.status).toBeGreaterThanOrEqual(500);
    expect(await counts()).toEqual(added);
    expect((await admin.get<Sandbox>(`/v1/sandboxes/${a.id}`)).body.reset_at).toBeNull();
    await allowInserts('exam_results');

    const reset = await admin.post<Sandbox>(`/v1/sandboxes/${a.id}/reset`);
    expect(reset.status).toBe(200);
    expect(reset.body.reset_at).not.toBeNull();
    expect(await names(a.id)).toEqual(before);
    // Every collection back to its seed, through the token, which survives a reset.
    expect(await counts()).toEqual(seeded);
    // Two resets at once: one after the other, each whole, neither refused.
    const both = await Promise.all([1, 2].map(() => admin.post(`/v1/sandboxes/${a.id}/reset`)));
    expect(both.map((r) => r.status)).toEqual([200, 200]);
    expect(await counts()).toEqual(seeded);

    expect((await admin.delete(`/v1/sandboxes/${a.id}`)).body).toEqual({
      id: a.id,
      object: 'sandbox',
      deleted: true,
    });
    expect((await client.get('/v1/students')).status).toBe(401);
    expect((await admin.get(`/v1/sandboxes/${a.id}`)).status).toBe(404);
    const audit = await admin.get<List<{ action: string }>>('/v1/audit_events?per_page=100');
    expect(audit.body.data.map((e) => e.action)).toEqual(
      expect.arrayContaining(['sandbox.created', 'sandbox.reset', 'sandbox.deleted']),
    );
  });

  it('limits how many, and who: admins manage, members get tokens with their role, and lose them when removed', async () => {
    const sandboxes: Sandbox[] = [];
    for (let i = 0; i < SANDBOX_LIMIT; i += 1)
      sandboxes.push(await createSandbox({ name: `S${i}`, students: 0 }));
    const over = await admin.post('/v1/sandboxes', { name: 'One too many' });
    expect(over.status).toBe(409);
    expect(problemOf(over).detail).toMatch(new RegExp(`at most ${SANDBOX_LIMIT}`));

    const viewerId = (
      await server.createUser(orgId, `viewer-${randomUUID()}@s.test`, 'pw-long-enough-2', {
        role: 'viewer',
      })
    ).id;
    const viewer = rawClient(
      server,
      (await server.createToken(orgId, ['all'], { userId: viewerId })).token,
    );
    expect((await viewer.post('/v1/sandboxes', { name: 'No' })).status).toBe(403);
    expect((await viewer.get<List>('/v1/sandboxes')).body.meta.total).toBe(SANDBOX_LIMIT);
    // A viewer reaches the sandbox as the portal does (its token's own scopes), and only reads.
    const viewerScopes = (await viewer.get<{ scopes: string[] }>('/v1/token')).body.scopes;
    expect(viewerScopes).not.toContain('tokens:write');
    const viewerSandbox = rawClient(
      server,
      (await sandboxToken(sandboxes[1]!.id, viewer, viewerScopes)).token,
    );
    expect((await viewerSandbox.get('/v1/students')).status).toBe(200);
    expect(
      (await viewerSandbox.post('/v1/sandbox/trigger', { event: 'student.created' })).status,
    ).toBe(403);
    const asksWrite = await viewer.post(`/v1/sandboxes/${sandboxes[1]!.id}/tokens`, {
      name: 'more',
      scopes: ['students:write'],
    });
    expect(asksWrite.status).toBe(403);
    expect(problemOf(asksWrite).detail).toMatch(/students:write/);
    // A token of no member would make one no member's leaving ends: that takes tokens:write.
    const integration = async (scopes: Scope[]) =>
      rawClient(server, (await server.createToken(orgId, scopes)).token).post(
        `/v1/sandboxes/${sandboxes[1]!.id}/tokens`,
        { name: 'ci', scopes: ['organization:read'] },
      );
    const readOnlyIntegration = await integration(['organization:read']);
    expect(readOnlyIntegration.status).toBe(403);
    expect(problemOf(readOnlyIntegration).detail).toMatch(/tokens:write/);
    expect(readOnlyIntegration.headers.get('www-authenticate')).toContain('scope="tokens:write"');
    expect((await integration(['organization:read', 'tokens:write'])).status).toBe(201);
    const developerId = (
      await server.createUser(orgId, `dev-${randomUUID()}@s.test`, 'pw-long-enough-3', {
        role: 'developer',
      })
    ).id;
    const developer = rawClient(
      server,
      (await server.createToken(orgId, ['all'], { userId: developerId })).token,
    );
    const { token } = await sandboxToken(sandboxes[0]!.id, developer, [
      'students:read',
      'students:write',
    ]);
    const devSandbox = rawClient(server, token);
    const student = (n: string) => ({ student_number: n, first_name: 'D', last_name: n });
    expect((await devSandbox.post('/v1/students', student('D-1'))).status).toBe(201);
    // The member's role in the parent caps the sandbox token, as it changes.
    expect((await admin.patch(`/v1/members/${developerId}`, { role: 'viewer' })).status).toBe(200);
    expect((await devSandbox.post('/v1/students', student('D-2'))).status).toBe(403);
    expect((await devSandbox.get('/v1/students')).status).toBe(200);
    expect((await admin.delete(`/v1/members/${developerId}`)).status).toBe(200);
    expect((await devSandbox.get('/v1/students')).status).toBe(401);
  });

  it('takes no members of its own: an invitation into it is a 409 that names its parent', async () => {
    const sandbox = await createSandbox();
    const client = rawClient(server, (await sandboxToken(sandbox.id)).token);
    const res = await client.post('/v1/invitations', { email: 'guest@s.test', role: 'viewer' });
    expect(res.status).toBe(409);
    expect(problemOf(res).detail).toContain(orgId);
    expect(await count(client, '/v1/invitations')).toBe(0);
    // The parent invites as before.
    expect(
      (await admin.post('/v1/invitations', { email: 'guest@s.test', role: 'viewer' })).status,
    ).toBe(201);
  });

  it("trigger enrolls into a course with a free seat, never a full one's 409", async () => {
    const sandbox = await createSandbox({ name: 'Seats', students: 60, seed: 11 });
    const client = rawClient(server, (await sandboxToken(sandbox.id)).token);
    // Every active course of the seed made full (or archived when nobody is enrolled), then one
    // course with two seats: the only place an enrollment can go.
    type Course = { id: string; status: string };
    const courses = (await client.get<{ data: Course[] }>('/v1/courses?per_page=100')).body.data;
    for (const course of courses.filter((c) => c.status === 'active')) {
      const enrolled = `/v1/enrollments?course_id=${course.id}&status=pending,active&per_page=1`;
      const live = (await client.get<List>(enrolled)).body.meta.total;
      const change = live > 0 ? { capacity: live } : { status: 'archived' };
      expect((await client.patch(`/v1/courses/${course.id}`, change)).status).toBe(200);
    }
    const open = await client.post<Course>('/v1/courses', {
      code: 'OPEN',
      title: 'Open',
      capacity: 2,
    });
    const trigger = () =>
      client.post<{ record: { course_id: string } }>('/v1/sandbox/trigger', {
        event: 'enrollment.created',
      });
    for (let seat = 1; seat <= 2; seat++) {
      const res = await trigger();
      expect({ seat, status: res.status }).toEqual({ seat, status: 201 });
      expect(res.body.record.course_id).toBe(open.body.id);
    }
    const full = await trigger();
    expect(full.status).toBe(409);
    expect(problemOf(full).detail).toContain('an active course with a seat');
  });

  it('trigger makes each event type happen, exactly that event, and only in a sandbox', async () => {
    const sandbox = await createSandbox({ name: 'Events', students: 60, seed: 11 });
    const client = rawClient(server, (await sandboxToken(sandbox.id)).token);
    // The sandbox's own webhook endpoint, made with its token, on a loopback receiver.
    const receiver = await startReceiver();
    afterTest.push(() => receiver.close());
    const endpoint = await client.post<{ secret: string }>('/v1/webhook_endpoints', {
      url: receiver.url,
      events: ['*'],
    });
    expect(endpoint.status).toBe(201);
    for (const type of TRIGGER_EVENT_TYPES) {
      const before = (await eventsOf(server, sandbox.id)).length;
      const res = await client.post<{
        event: { id: string; type: string };
        record: { id: string };
      }>('/v1/sandbox/trigger', { event: type });
      expect({ type, status: res.status }).toEqual({ type, status: 201 });
      const sent = (await eventsOf(server, sandbox.id)).slice(before);
      expect({ type, sent: sent.map((e) => e.type) }).toEqual({ type, sent: [type] });
      expect(res.body.event).toEqual({ id: sent[0]!.id, type });
      expect(sent[0]!.data).toMatchObject({ id: res.body.record.id });
    }
    // Each delivered once, signed with the sandbox endpoint's secret.
    await waitFor(() => receiver.received.length >= TRIGGER_EVENT_TYPES.length, {
      what: 'the triggered events delivered',
    });
    const hook = new Webhook(endpoint.body.secret);
    const delivered = receiver.received.map(
      (r) => (hook.verify(r.body, r.headers as Record<string, string>) as { type: string }).type,
    );
    expect(delivered.sort()).toEqual([...TRIGGER_EVENT_TYPES].sort());

    const named = await client.post<{ record: { id: string } }>('/v1/sandbox/trigger', {
      event: 'student.created',
      overrides: { first_name: 'Override', grade_level: 4 },
    });
    expect((await client.get<Row>(`/v1/students/${named.body.record.id}`)).body).toMatchObject({
      first_name: 'Override',
      grade_level: 4,
    });
    const bad = await client.post('/v1/sandbox/trigger', {
      event: 'student.created',
      overrides: { grade_level: 40 },
    });
    expect(bad.status).toBe(400);
    expect(problemOf(bad).errors?.[0]?.path).toBe('body.overrides.grade_level');
    const noOverrides = await client.post('/v1/sandbox/trigger', {
      event: 'payment.failed',
      overrides: { amount: 1 },
    });
    expect(noOverrides.status).toBe(400);

    const live = await admin.post('/v1/sandbox/trigger', { event: 'student.created' });
    expect(live.status).toBe(403);
    expect(problemOf(live).detail).toMatch(/sandbox's token/);
    const readOnly = rawClient(
      server,
      (await sandboxToken(sandbox.id, admin, ['students:read'])).token,
    );
    expect((await readOnly.post('/v1/sandbox/trigger', { event: 'student.created' })).status).toBe(
      403,
    );
  });
});
