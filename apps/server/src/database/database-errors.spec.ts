import { DataSource, QueryRunnerProviderAlreadyReleasedError } from 'typeorm';
import { TransactionRunner } from '../common/transactions';
import { isDatabaseUnavailable } from './database-errors';
import { Sql } from './sql';

/**
 * A failure that is the database's (down, unreachable, full) answers 503 with Retry-After; any
 * other is a 500. These pin the cases an outage produces that carry no driver code.
 */
describe('isDatabaseUnavailable', () => {
  it("counts TypeORM's refusal to use a released query runner as the outage", () => {
    expect(isDatabaseUnavailable(new QueryRunnerProviderAlreadyReleasedError())).toBe(true);
    expect(isDatabaseUnavailable(new Error('a bug of our own'))).toBe(false);
  });
});

const ADMIN_URL = process.env.TEST_DATABASE_URL;

// PostgreSQL only (CI sets TEST_DATABASE_URL): SQLite has no connection to lose.
if (ADMIN_URL) {
  describe('a PostgreSQL connection lost inside a transaction', () => {
    let dataSource: DataSource;

    beforeAll(async () => {
      dataSource = new DataSource({ type: 'postgres', url: ADMIN_URL, extra: { max: 4 } });
      await dataSource.initialize();
    });

    afterAll(() => dataSource.destroy());

    it('fails the transaction with an error counted as the outage, not a bug', async () => {
      const transactions = new TransactionRunner(dataSource, new Sql(dataSource));
      const failure = await transactions
        .run(async (manager) => {
          const [row] = await manager.query<{ pid: number }[]>('SELECT pg_backend_pid() AS pid');
          const pid = row!.pid;
          // As a server shutting down does: the backend goes, the client hears it at once.
          await dataSource.query('SELECT pg_terminate_backend($1)', [pid]);
          await new Promise((resolve) => setTimeout(resolve, 300));
          await manager.query('SELECT 1');
        })
        .then(
          () => undefined,
          (error: unknown) => error,
        );
      expect(failure).toBeDefined();
      expect(isDatabaseUnavailable(failure)).toBe(true);
    });
  });
}
