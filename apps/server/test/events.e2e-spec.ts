import { EventSchema } from '@platform/contract';
import { expectStatus, typedClient, type TypedClient } from './support/api';
import { problemOf, rawClient, startServer, type TestServer } from './support/server';

describe('GET /v1/events', () => {
  let server: TestServer;
  let orgId: string;
  let api: TypedClient;
  /** For a filter value the contract's types refuse (an unknown event type). */
  let raw: ReturnType<typeof rawClient>;
  let student: { id: string };

  beforeAll(async () => {
    server = await startServer();
    orgId = (await server.createOrganization()).id;
    const { token } = await server.createToken(orgId, ['all']);
    api = typedClient(server, token);
    raw = rawClient(server, token);
    const created = await api.students.create({
      body: { student_number: 'EV-1', first_name: 'Eve', last_name: 'Ent' },
    });
    student = expectStatus(created, 201).body;
    await api.students.update({ params: { id: student.id }, body: { grade_level: 3 } });
    await api.courses.create({ body: { code: 'EV', title: 'Events' } });
  });
  afterAll(() => server.close());

  it("lists the organization's events newest first, each valid against the catalogue", async () => {
    const res = expectStatus(await api.events.list(), 200);
    expect(res.body.data.map((e) => e.type)).toEqual([
      'course.created',
      'student.updated',
      'student.created',
    ]);
    for (const event of res.body.data) expect(EventSchema.safeParse(event).success).toBe(true);
    expect(res.body.data[2]).toMatchObject({
      object: 'event',
      api_version: 'v1',
      data: { id: student.id, grade_level: null },
    });
    expect(res.body.data[1]?.data).toHaveProperty('grade_level', 3);
  });

  it('filters by type and time, and retrieves one event', async () => {
    const students = expectStatus(
      await api.events.list({
        query: { type: 'student.created,student.updated', sort: 'created_at' },
      }),
      200,
    );
    expect(students.body.data.map((e) => e.type)).toEqual(['student.created', 'student.updated']);
    const first = students.body.data[0]!;
    const since = expectStatus(
      await api.events.list({ query: { updated_since: students.body.data[1]!.timestamp } }),
      200,
    );
    expect(since.body.data.map((e) => e.type)).toEqual(['course.created', 'student.updated']);
    expect((await api.events.retrieve({ params: { id: first.id } })).body).toEqual(first);
    const unknownType = await raw.get('/v1/events?type=student.exploded');
    expect(unknownType.status).toBe(400);
    expect(problemOf(unknownType).errors?.[0]?.path).toBe('query.type');
  });

  it('keeps 30 days: older events are neither listed nor retrievable', async () => {
    const old = new Date(Date.now() - 31 * 86_400_000);
    const id = 'evt_01JA0000000000000000000000';
    await server.dataSource.query(
      server.config.database.type === 'postgres'
        ? 'INSERT INTO events (id, organization_id, type, api_version, data, created_at) VALUES ($1, $2, $3, $4, $5, $6)'
        : 'INSERT INTO events (id, organization_id, type, api_version, data, created_at) VALUES (?, ?, ?, ?, ?, ?)',
      [
        id,
        orgId,
        'ping',
        'v1',
        JSON.stringify({ message: 'old' }),
        server.config.database.type === 'postgres'
          ? old
          : old.toISOString().replace('T', ' ').replace('Z', ''),
      ],
    );
    expect((await api.events.retrieve({ params: { id } })).status).toBe(404);
    const all = expectStatus(await api.events.list({ query: { per_page: 100 } }), 200);
    expect(all.body.data.map((e) => e.id)).not.toContain(id);
    expect(all.body.meta.total).toBe(3);
  });

  it('omits from lists, and 404s by id, the events whose resource the token cannot read', async () => {
    const all = expectStatus(await api.events.list({ query: { sort: 'created_at' } }), 200);
    const [studentCreated, , courseCreated] = all.body.data;
    const { token: eventsOnly } = await server.createToken(orgId, ['events:read']);
    const { token: withCourses } = await server.createToken(orgId, ['events:read', 'courses:read']);

    const none = expectStatus(await typedClient(server, eventsOnly).events.list(), 200);
    expect(none.body.data).toEqual([]);
    expect(none.body.meta.total).toBe(0);
    const hidden = await rawClient(server, eventsOnly).get(`/v1/events/${studentCreated!.id}`);
    expect(hidden.status).toBe(404);
    expect(problemOf(hidden)).toMatchObject({
      code: 'not_found',
      detail: `No event ${studentCreated!.id} in your organization`,
    });

    const courses = typedClient(server, withCourses);
    const listed = expectStatus(await courses.events.list(), 200);
    expect(listed.body.data.map((e) => e.type)).toEqual(['course.created']);
    expect(listed.body.meta.total).toBe(1);
    const filtered = expectStatus(
      await courses.events.list({ query: { type: 'student.created,course.created' } }),
      200,
    );
    expect(filtered.body.data.map((e) => e.type)).toEqual(['course.created']);
    expect(
      expectStatus(await courses.events.retrieve({ params: { id: courseCreated!.id } }), 200).body,
    ).toEqual(courseCreated);
    expect((await courses.events.retrieve({ params: { id: studentCreated!.id } })).status).toBe(
      404,
    );
  });
});
