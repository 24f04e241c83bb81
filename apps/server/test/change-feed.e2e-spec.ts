import { EventsService } from '../src/events/events.service';
import { FeedPositions } from '../src/events/feed-position';
import { TransactionRunner } from '../src/common/transactions';
import { expectStatus, typedClient, type TypedClient } from './support/api';
import { startServer, type TestServer } from './support/server';

/** The organization's events with their feed positions, in the order they were written. */
async function positionsOf(server: TestServer, organizationId: string) {
  const rows: { type: string; position: string | number | null }[] = await server.dataSource.query(
    server.config.database.type === 'postgres'
      ? 'SELECT type, position FROM events WHERE organization_id = $1 ORDER BY created_at, id'
      : 'SELECT type, position FROM events WHERE organization_id = ? ORDER BY created_at, id',
    [organizationId],
  );
  return rows.map((row) => [row.type, row.position === null ? null : Number(row.position)]);
}

describe('change feed positions', () => {
  let server: TestServer;
  let orgId: string;
  let api: TypedClient;

  beforeAll(async () => {
    server = await startServer();
    orgId = (await server.createOrganization()).id;
    api = typedClient(server, (await server.createToken(orgId, ['all'])).token);
  });
  afterAll(() => server.close());

  it('numbers each change of an organization 1, 2, 3 and reports the head', async () => {
    const other = (await server.createOrganization()).id;
    const student = expectStatus(
      await api.students.create({
        body: { student_number: 'FP-1', first_name: 'Fay', last_name: 'Pos' },
      }),
      201,
    ).body;
    await api.students.update({ params: { id: student.id }, body: { grade_level: 4 } });
    await api.students.delete({ params: { id: student.id } });
    expect(await positionsOf(server, orgId)).toEqual([
      ['student.created', 1],
      ['student.updated', 2],
      ['student.deleted', 3],
    ]);
    const feed = server.app.get(FeedPositions);
    expect(await feed.head(server.dataSource.manager, orgId)).toBe('3');
    expect(await feed.head(server.dataSource.manager, other)).toBe('0');
  });

  it('gives a rolled-back change no position, and leaves no hole after it', async () => {
    const transactions = server.app.get(TransactionRunner);
    const events = server.app.get(EventsService);
    await expect(
      transactions.run(async (manager) => {
        await events.record(manager, orgId, 'ping', { message: 'not a change' }, undefined, {
          fanOut: false,
        });
        await events.record(manager, orgId, 'course.deleted', {
          id: 'crs_01JA0000000000000000000000',
          object: 'course',
          deleted: true,
        } as never);
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    await api.courses.create({ body: { code: 'FP', title: 'Positions' } });
    const rows = await positionsOf(server, orgId);
    expect(rows.slice(3)).toEqual([['course.created', 4]]);
    expect(await server.app.get(FeedPositions).head(server.dataSource.manager, orgId)).toBe('4');
  });
});
