/**
 * The feed's order under concurrent writers: a reader following the feed while many writers
 * commit at once sees every committed change exactly once, in position order, with no gap. On
 * PostgreSQL the writers go through two server instances on one database (their transactions
 * run concurrently); on SQLite through one instance, whose writes are serialised.
 */
import { expectStatus, typedClient } from './support/api';
import { DATABASE_KIND, startServer, type TestServer } from './support/server';

const WRITERS = 12;
const WRITES_PER_WRITER = 15;

describe('change feed under concurrent writers', () => {
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

  it('shows a following reader every committed change exactly once, in order', async () => {
    const [first] = servers;
    const orgId = (await first!.createOrganization()).id;
    const clients = await Promise.all(
      servers.map(async (server) =>
        typedClient(server, (await server.createToken(orgId, ['all'])).token),
      ),
    );

    let writing = true;
    const seen: { position: number; id: string }[] = [];
    const reader = (async () => {
      let cursor = '0';
      for (let reads = 0; ; reads += 1) {
        const client = clients[reads % clients.length]!;
        const page = expectStatus(
          await client.events.changes({ query: { after: cursor, limit: 7, wait: '1s' } }),
          200,
        ).body;
        for (const event of page.data) seen.push({ position: event.position!, id: event.id });
        cursor = page.next_cursor;
        if (!writing && !page.has_more && page.data.length === 0) return;
      }
    })();

    let failures = 0;
    await Promise.all(
      Array.from({ length: WRITERS }, async (_, writer) => {
        const api = clients[writer % clients.length]!;
        for (let i = 0; i < WRITES_PER_WRITER; i += 1) {
          const created = await api.students.create({
            body: { student_number: `W${writer}-${i}`, first_name: 'Con', last_name: 'Current' },
          });
          if (created.status !== 201) {
            failures += 1;
            continue;
          }
          if (i % 3 === 0)
            await api.students.update({
              params: { id: created.body.id },
              body: { grade_level: 2 },
            });
          if (i % 5 === 0) await api.students.delete({ params: { id: created.body.id } });
        }
      }),
    );
    writing = false;
    await reader;
    expect(failures).toBe(0);

    const committed: { id: string; position: string | number }[] = await first!.dataSource.query(
      DATABASE_KIND === 'postgres'
        ? 'SELECT id, position FROM events WHERE organization_id = $1 ORDER BY position'
        : 'SELECT id, position FROM events WHERE organization_id = ? ORDER BY position',
      [orgId],
    );
    const expected = WRITERS * WRITES_PER_WRITER + WRITERS * 5 + WRITERS * 3;
    expect(committed).toHaveLength(expected);
    // Positions are 1..n with no hole, and the reader saw exactly those, in that order, once each.
    expect(committed.map((row) => Number(row.position))).toEqual(
      Array.from({ length: expected }, (_, i) => i + 1),
    );
    expect(seen).toEqual(committed.map((row) => ({ id: row.id, position: Number(row.position) })));
  });
});
