import type { Export } from '@platform/contract';
import { rawClient, DATABASE_KIND, startServer, type TestServer } from './support/server';

/**
 * The scale-out deployment: an export made through one instance, run by whichever instance
 * claims it, downloads through another, byte for byte. PostgreSQL only: instances share only a
 * PostgreSQL database (the embedded SQLite default is one process). On SQLite the same file is
 * downloaded twice from the one instance, so the suite still checks repeat downloads.
 */
describe('export files across instances', () => {
  const servers: TestServer[] = [];

  beforeAll(async () => {
    const first = await startServer();
    servers.push(first);
    if (DATABASE_KIND === 'postgres')
      servers.push(await startServer({}, { databaseUrl: first.databaseUrl }));
  });
  afterAll(async () => {
    for (const server of servers.reverse()) await server.close();
  });

  it('downloads the same file from every instance', async () => {
    const [first] = servers;
    const last = servers.at(-1)!;
    const orgId = (await first!.createOrganization()).id;
    const { token } = await first!.createToken(orgId, ['all']);
    await first!.insertStudents(orgId, 3_000);
    const made = await rawClient(first!, token).post<Export>('/v1/exports', {
      collection: 'students',
    });
    expect(made.status).toBe(202);
    let status = '';
    for (let i = 0; i < 600 && status !== 'succeeded'; i += 1) {
      // Read through the other instance: the export's state lives in the shared database.
      status = (await rawClient(last, token).get<Export>(`/v1/exports/${made.body.id}`)).body
        .status;
      if (status !== 'succeeded') await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(status).toBe('succeeded');
    const files = await Promise.all(
      [...servers, last].map(async (server) => {
        const res = await fetch(`${server.url}/v1/exports/${made.body.id}/file`, {
          headers: { Authorization: `Bearer ${token}` },
        });
        expect(res.status).toBe(200);
        return res.text();
      }),
    );
    expect(files[0]!.split('\n').filter(Boolean)).toHaveLength(3_000);
    for (const file of files) expect(file).toBe(files[0]);
  }, 120_000);
});
