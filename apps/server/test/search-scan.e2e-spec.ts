import { expectStatus, typedClient } from './support/api';
import { rawCall, startServer, type TestServer } from './support/server';

type Page = { data: { id: string }[]; meta: { total: number; total_exact: boolean } };

/**
 * SQLite: a `q` of 3+ characters in a small organization scans its rows (SQLITE_SCAN_WHOLE,
 * `LIST_SEARCH_SCAN_ROWS`); in a larger one it starts from the trigram index. Either way it must
 * find the same records. Here one organization's records in each searchable collection that is
 * tallied, searched on a server that scans them and on one that never scans (`0`), sharing the
 * database: non-ASCII case, quotes, and `_` and `%` taken literally. (PostgreSQL walks a small
 * organization whole, POSTGRES_WALK_WHOLE, on both servers: the same answers are checked.)
 */
describe("a small organization's search finds what the trigram index finds", () => {
  let scanning: TestServer;
  let indexed: TestServer;
  let token: string;

  beforeAll(async () => {
    scanning = await startServer();
    indexed = await startServer(
      { LIST_SEARCH_SCAN_ROWS: '0' },
      { databaseUrl: scanning.databaseUrl },
    );
    const organizationId = (await scanning.createOrganization()).id;
    ({ token } = await scanning.createToken(organizationId, ['all']));
    const api = typedClient(scanning, token);
    const course = expectStatus(
      await api.courses.create({ body: { code: 'ÉCO-1', title: 'Économie & Émile' } }),
      201,
    ).body;
    await api.courses.create({ body: { code: 'ART-2', title: 'Sculpture 100%' } });
    const student = expectStatus(
      await api.students.create({
        body: {
          student_number: 'S-ÉMI-1',
          first_name: 'Émile',
          last_name: "O'Brien",
          email: 'emile_o@example.org',
        },
      }),
      201,
    ).body;
    await api.students.create({
      body: { student_number: 'S-2', first_name: 'Ana', last_name: 'Émery' },
    });
    const exam = { course_id: course.id, max_score: 100, held_on: '2026-03-01' };
    await api.exams.create({ body: { ...exam, title: 'Émile practical' } });
    await api.exams.create({ body: { ...exam, title: 'Final' } });
    const payment = { student_id: student.id, currency: 'EUR' };
    await api.payments.create({
      body: { ...payment, amount: 100, description: 'Émile library fine' },
    });
    await api.payments.create({
      body: { ...payment, amount: 200, description: 'Lab fee', external_reference: 'INV-ÉMI-2' },
    });
  });
  afterAll(async () => {
    await indexed.close();
    await scanning.close();
  });

  it.each([
    ['students', 'émi', 1],
    ['students', 'ÉME', 1],
    ['students', "o'b", 1],
    ['students', 'e_o', 1],
    ['courses', 'émi', 1],
    ['courses', 'ÉCO', 1],
    ['courses', '100%', 1],
    ['exams', 'PRACtical', 1],
    ['exams', 'émile', 1],
    ['payments', 'émi', 2],
    ['payments', 'fee', 1],
  ] as const)('%s?q=%s: the same %d record(s) either way', async (collection, q, found) => {
    const search = async (server: TestServer) => {
      const path = `/v1/${collection}?q=${encodeURIComponent(q)}`;
      const res = await rawCall<Page>(server, path, { token });
      expect(res.status).toBe(200);
      return { ids: res.body.data.map((r) => r.id), meta: res.body.meta };
    };
    const scanned = await search(scanning);
    expect(scanned.ids).toHaveLength(found);
    expect(scanned.meta).toMatchObject({ total: found, total_exact: true });
    expect(await search(indexed)).toEqual(scanned);
  });
});
