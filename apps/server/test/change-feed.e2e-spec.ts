import type { EventData } from '@platform/contract';
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

  it('gives a change made under an Idempotency-Key its position too, once', async () => {
    const org = (await server.createOrganization()).id;
    const { token } = await server.createToken(org, ['all']);
    const post = () =>
      fetch(`${server.url}/v1/courses`, {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${token}`,
          'Content-Type': 'application/json',
          'Idempotency-Key': 'feed-once',
        },
        body: JSON.stringify({ code: 'IDEM', title: 'Once' }),
      });
    expect((await post()).status).toBe(201);
    expect((await post()).headers.get('idempotent-replayed')).toBe('true');
    expect(await positionsOf(server, org)).toEqual([['course.created', 1]]);
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

  it('numbers only what commits when part of a transaction rolls back to a savepoint', async () => {
    const org = (await server.createOrganization()).id;
    const transactions = server.app.get(TransactionRunner);
    const events = server.app.get(EventsService);
    const deleted = (id: string) =>
      ({ id, object: 'course', deleted: true }) as unknown as EventData<'course.deleted'>;
    await transactions.atomic(async () => {
      await transactions
        .run(async (manager) => {
          await events.record(manager, org, 'course.deleted', deleted('crs_undone'));
          throw new Error('undo this part');
        })
        .catch(() => undefined);
      await transactions.run((manager) =>
        events.record(manager, org, 'course.deleted', deleted('crs_kept')),
      );
    });
    const rows: { data: string; position: string | number }[] = await server.dataSource.query(
      server.config.database.type === 'postgres'
        ? 'SELECT data, position FROM events WHERE organization_id = $1'
        : 'SELECT data, position FROM events WHERE organization_id = ?',
      [org],
    );
    expect(rows.map((r) => [JSON.parse(r.data).id, Number(r.position)])).toEqual([['crs_kept', 1]]);
    expect(await server.app.get(FeedPositions).head(server.dataSource.manager, org)).toBe('1');
  });

  it('numbers one transaction’s changes in the order recorded, one by one and in batches', async () => {
    const [first, second] = [(await server.createOrganization()).id, await seedOrganization()];
    const transactions = server.app.get(TransactionRunner);
    const events = server.app.get(EventsService);
    const deleted = (id: string) => ({
      type: 'course.deleted' as const,
      data: { id, object: 'course', deleted: true } as unknown as EventData<'course.deleted'>,
    });
    await transactions.atomic(async () => {
      await transactions.run(async (manager) => {
        await events.recordMany(manager, first, [deleted('a1')]);
        await events.recordMany(manager, second, [deleted('b3'), deleted('b4')]);
        await events.recordMany(manager, first, [deleted('a2'), deleted('a3')]);
      });
      await transactions
        .run(async (manager) => {
          await events.recordMany(manager, first, [deleted('undone')]);
          throw new Error('undo this part');
        })
        .catch(() => undefined);
      await transactions.run(async (manager) => {
        await events.recordMany(manager, first, [deleted('a4')]);
        await events.recordMany(manager, second, [deleted('b5')]);
      });
    });
    const numbered = async (org: string) => {
      const rows: { data: string; position: string | number }[] = await server.dataSource.query(
        server.config.database.type === 'postgres'
          ? 'SELECT data, position FROM events WHERE organization_id = $1 ORDER BY position'
          : 'SELECT data, position FROM events WHERE organization_id = ? ORDER BY position',
        [org],
      );
      return rows.map((r) => [JSON.parse(r.data).id, Number(r.position)]);
    };
    expect(await numbered(first)).toEqual([
      ['a1', 1],
      ['a2', 2],
      ['a3', 3],
      ['a4', 4],
    ]);
    expect(await numbered(second)).toEqual([
      ['b1', 1],
      ['b2', 2],
      ['b3', 3],
      ['b4', 4],
      ['b5', 5],
    ]);
  });

  /** An organization whose feed already holds two changes (`b1`, `b2`), committed separately. */
  async function seedOrganization(): Promise<string> {
    const org = (await server.createOrganization()).id;
    const events = server.app.get(EventsService);
    for (const id of ['b1', 'b2'])
      await server.app.get(TransactionRunner).run((manager) =>
        events.record(manager, org, 'course.deleted', {
          id,
          object: 'course',
          deleted: true,
        } as unknown as EventData<'course.deleted'>),
      );
    return org;
  }
});
