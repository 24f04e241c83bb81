import { EventSchema } from '@platform/contract';
import { client, startServer, type TestServer } from './support/server';

describe('GET /v1/events', () => {
  let server: TestServer;
  let orgId: string;
  let api: ReturnType<typeof client>;
  let student: { id: string };

  beforeAll(async () => {
    server = await startServer();
    orgId = (await server.createOrganization()).id;
    api = client(server, (await server.createToken(orgId, ['all'])).token);
    student = (
      await api.post('/v1/students', {
        student_number: 'EV-1',
        first_name: 'Eve',
        last_name: 'Ent',
      })
    ).body;
    await api.patch(`/v1/students/${student.id}`, { grade_level: 3 });
    await api.post('/v1/courses', { code: 'EV', title: 'Events' });
  });
  afterAll(() => server.close());

  it("lists the organization's events newest first, each valid against the catalogue", async () => {
    const res = await api.get('/v1/events');
    expect(res.status).toBe(200);
    expect(res.body.data.map((e: { type: string }) => e.type)).toEqual([
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
    expect(res.body.data[1].data.grade_level).toBe(3);
  });

  it('filters by type and time, and retrieves one event', async () => {
    const students = await api.get(
      '/v1/events?type=student.created,student.updated&sort=created_at',
    );
    expect(students.body.data.map((e: { type: string }) => e.type)).toEqual([
      'student.created',
      'student.updated',
    ]);
    const first = students.body.data[0];
    const since = await api.get(
      `/v1/events?updated_since=${encodeURIComponent(students.body.data[1].timestamp)}`,
    );
    expect(since.body.data.map((e: { type: string }) => e.type)).toEqual([
      'course.created',
      'student.updated',
    ]);
    expect((await api.get(`/v1/events/${first.id}`)).body).toEqual(first);
    const unknownType = await api.get('/v1/events?type=student.exploded');
    expect(unknownType.status).toBe(400);
    expect(unknownType.body.errors[0].path).toBe('query.type');
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
    expect((await api.get(`/v1/events/${id}`)).status).toBe(404);
    const all = await api.get('/v1/events?per_page=100');
    expect(all.body.data.map((e: { id: string }) => e.id)).not.toContain(id);
    expect(all.body.meta.total).toBe(3);
  });
});
