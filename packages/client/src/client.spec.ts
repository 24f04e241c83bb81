/**
 * The SDK against the real server (SQLite, or PostgreSQL when TEST_DATABASE_URL is set).
 */
import {
  demoStudents,
  startTestServer,
  type Student,
  type TestServer,
} from '@platform/server/testing';
import {
  createClient,
  PlatformApiError,
  PlatformAuthenticationError,
  PlatformNotFoundError,
  PlatformPermissionError,
  PlatformRateLimitError,
  PlatformValidationError,
  type ClientOptions,
} from './index';

const STUDENT_COUNT = 57;

let server: TestServer;
let token: string;
let students: Student[];

beforeAll(async () => {
  server = await startTestServer({
    postgresAdminUrl: process.env.TEST_DATABASE_URL,
    redisUrl: process.env.TEST_REDIS_URL,
  });
  const organization = await server.createOrganization();
  token = (await server.createToken(organization.id, ['students:read'])).token;
  students = await server.insertStudents(organization.id, STUDENT_COUNT);
});

afterAll(async () => {
  await server?.close();
});

function client(options: Partial<ClientOptions> = {}) {
  return createClient({ baseUrl: server.url, token, ...options });
}

/** The global fetch, counting the requests that go through it. */
function countingFetch() {
  const counter = {
    requests: [] as string[],
    fetch: (input: RequestInfo | URL, init?: RequestInit) => {
      counter.requests.push(
        typeof input === 'string' ? input : input instanceof URL ? input.href : input.url,
      );
      return fetch(input, init);
    },
  };
  return counter;
}

/** Runs `fn` and returns what it threw, failing the test if it did not throw. */
async function thrown(fn: () => Promise<unknown>): Promise<unknown> {
  try {
    await fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to throw');
}

describe('createClient against the real server', () => {
  describe('list', () => {
    it('returns typed students and pagination meta for the requested page', async () => {
      const page = await client().students.list({ page: 2, per_page: 10 });

      expect(page.data).toHaveLength(10);
      expect(page.data[0]).toMatchObject({ object: 'student', id: expect.stringMatching(/^stu_/) });
      expect(page.meta).toEqual({
        page: 2,
        per_page: 10,
        total: STUDENT_COUNT,
        total_pages: 6,
        total_exact: true,
      });
      expect(page.links.prev).toContain('page=1');
      expect(new URL(page.links.next!).searchParams.get('cursor')).toMatch(/^[\w-]+\.[\w-]{10}$/);
    });

    it('accepts ts-rest request args as well as the bare query', async () => {
      const bare = await client().students.list({ per_page: 5, sort: 'created_at' });
      const args = await client().students.list({ query: { per_page: 5, sort: 'created_at' } });

      expect(args.data.map((s) => s.id)).toEqual(bare.data.map((s) => s.id));
      expect(bare.data.map((s) => s.id)).toEqual(students.slice(0, 5).map((s) => s.id));
    });

    it('passes equality filters, search and range filters through to the server', async () => {
      const graduatedOrWithdrawn = await client().students.list({
        status: 'graduated,withdrawn',
        per_page: 100,
      });
      const thirdGrade = await client().students.list({ grade_level: '3', per_page: 100 });
      const found = await client().students.list({ q: students[6]!.studentNumber });
      const recent = await client().students.list({
        'created_at[gte]': students[50]!.createdAt.toISOString(),
        per_page: 100,
      });

      const idsOf = (rows: { id: string }[]) => rows.map((s) => s.id).sort();
      expect(idsOf(graduatedOrWithdrawn.data)).toEqual(
        idsOf(students.filter((s) => s.status === 'graduated' || s.status === 'withdrawn')),
      );
      expect(idsOf(thirdGrade.data)).toEqual(idsOf(students.filter((s) => s.gradeLevel === 3)));
      expect(found.data.map((s) => s.id)).toEqual([students[6]!.id]);
      expect(idsOf(recent.data)).toEqual(idsOf(students.slice(50)));
    });

    it('reaches the same API under the /api/v1 alias', async () => {
      const page = await client({ apiPrefix: '/api/v1' }).students.list({ per_page: 1 });

      expect(page.meta.total).toBe(STUDENT_COUNT);
    });
  });

  describe('listAll', () => {
    it('yields every student exactly once, following pages until there is no next', async () => {
      const counter = countingFetch();
      const seen: string[] = [];
      for await (const student of client({ fetch: counter.fetch }).students.listAll({
        per_page: 10,
      })) {
        seen.push(student.id);
      }

      expect(seen).toHaveLength(STUDENT_COUNT);
      expect(new Set(seen).size).toBe(STUDENT_COUNT);
      expect([...seen].sort()).toEqual(students.map((s) => s.id).sort());
      expect(counter.requests).toHaveLength(6);
      // The first page is the list call itself (the server's page 1); then each next page is
      // links.next's cursor, never a page number.
      const params = counter.requests.map((url) => new URL(url).searchParams);
      expect(params.map((p) => p.get('page'))).toEqual([null, null, null, null, null, null]);
      expect(params.map((p) => p.get('cursor') !== null)).toEqual([
        false,
        true,
        true,
        true,
        true,
        true,
      ]);
    });

    it('neither repeats nor skips a student when one is created during the walk', async () => {
      // An organization of its own: the others' counts stay as they are.
      const org = await server.createOrganization();
      const own = (await server.createToken(org.id, ['students:read'])).token;
      const before = await server.insertStudents(org.id, 30);
      const seen: string[] = [];
      for await (const student of client({ token: own }).students.listAll({ per_page: 10 })) {
        seen.push(student.id);
        // Newest first: the new student sorts before the walk's position, as a page number
        // would count it, moving the next page back by one.
        if (seen.length === 10) {
          const [late] = demoStudents(org.id, 1);
          const newest = new Date(Date.now() + 60_000);
          await server.insertStudents(org.id, [
            { ...late!, studentNumber: 'LATE-1', createdAt: newest, updatedAt: newest },
          ]);
        }
      }
      expect([...seen].sort()).toEqual(before.map((s) => s.id).sort());
    });

    it('keeps filters and sort on every page', async () => {
      const counter = countingFetch();
      const active: string[] = [];
      const query = { status: 'active', sort: 'created_at', per_page: 10 } as const;
      for await (const student of client({ fetch: counter.fetch }).students.listAll(query)) {
        active.push(student.id);
      }

      const expected = students.filter((s) => s.status === 'active').map((s) => s.id);
      expect(active).toEqual(expected);
      expect(counter.requests).toHaveLength(Math.ceil(expected.length / 10));
      for (const url of counter.requests) {
        const params = new URL(url).searchParams;
        expect([params.get('status'), params.get('sort'), params.get('per_page')]).toEqual([
          'active',
          'created_at',
          '10',
        ]);
      }
    });

    it('asks for 100 per page unless told otherwise, to spend few requests of the rate limit', async () => {
      const counter = countingFetch();
      let count = 0;
      for await (const _student of client({ fetch: counter.fetch }).students.listAll()) count++;

      expect(count).toBe(STUDENT_COUNT);
      expect(counter.requests).toHaveLength(1);
      expect(new URL(counter.requests[0]!).searchParams.get('per_page')).toBe('100');
    });

    it('can stop early without fetching the remaining pages', async () => {
      const counter = countingFetch();
      const firstFifteen: string[] = [];
      for await (const student of client({ fetch: counter.fetch }).students.listAll({
        per_page: 10,
      })) {
        firstFifteen.push(student.id);
        if (firstFifteen.length === 15) break;
      }

      expect(firstFifteen).toHaveLength(15);
      expect(counter.requests).toHaveLength(2);
    });
  });

  describe('ergonomics', () => {
    it('walks every item of every page with for await directly on list()', async () => {
      const counter = countingFetch();
      const seen: string[] = [];
      for await (const student of client({ fetch: counter.fetch }).students.list({ per_page: 10 }))
        seen.push(student.id);

      expect([...seen].sort()).toEqual(students.map((s) => s.id).sort());
      expect(counter.requests).toHaveLength(6);
    });

    it('collects the first items with autoPagingToArray, fetching no page beyond them', async () => {
      const counter = countingFetch();
      const firstTwelve = await client({ fetch: counter.fetch })
        .students.list({ per_page: 5, sort: 'created_at' })
        .autoPagingToArray({ limit: 12 });
      const expected = await client().students.list({ per_page: 12, sort: 'created_at' });

      expect(firstTwelve.map((s) => s.id)).toEqual(expected.data.map((s) => s.id));
      expect(counter.requests).toHaveLength(3);
      await expect(client().students.list().autoPagingToArray({ limit: 0 })).rejects.toThrow(
        /`limit` must be an integer from 1 to 10000/,
      );
    });

    it('takes the id positionally, and the { params } form still works', async () => {
      const id = students[0]!.id;
      const positional = await client().students.retrieve(id);
      const withParams = await client().students.retrieve({ params: { id } });

      expect(positional.id).toBe(id);
      expect(positional).toEqual(withParams);
      await expect(client().students.retrieve(id, 5 as never)).rejects.toThrow(
        'students.retrieve: after the id comes an arguments object ({ body, query, extraHeaders, fetchOptions }), got number.',
      );
    });

    it('calls any path with request(), with the same auth and errors', async () => {
      const page = await client().request<{ meta: { total: number } }>('GET', '/v1/students', {
        query: { per_page: 1 },
      });
      expect(page.meta.total).toBe(STUDENT_COUNT);
      const error = await thrown(() =>
        client().request('GET', '/v1/students/stu_01JD6Y3ZK8R5V2N3M4P5Q6R7S8'),
      );
      expect(error).toBeInstanceOf(PlatformNotFoundError);
      await expect(client().request('GET', 'students' as '/v1/students')).rejects.toThrow(
        /the path must start with \/v1\//,
      );
    });
  });

  describe('errors', () => {
    it('throws PlatformAuthenticationError with code unauthorized and the request id for a bad token', async () => {
      const error = await thrown(() => client({ token: 'pat_not_a_real_token' }).students.list());

      expect(error).toBeInstanceOf(PlatformAuthenticationError);
      expect(error).toBeInstanceOf(PlatformApiError);
      const apiError = error as PlatformAuthenticationError;
      expect(apiError.status).toBe(401);
      expect(apiError.code).toBe('unauthorized');
      expect(apiError.requestId).toMatch(/^req_/);
      expect(apiError.requestId).toBe(apiError.headers.get('x-request-id'));
      expect(apiError.headers.get('www-authenticate')).toContain('invalid_token');
      expect(apiError.problem).toMatchObject({
        status: 401,
        code: 'unauthorized',
        request_id: apiError.requestId,
      });
      expect(apiError.message).toContain(apiError.requestId);
    });

    it('reports the request id the caller sent, so logs on both sides line up', async () => {
      const error = await thrown(() =>
        client({
          token: 'pat_not_a_real_token',
          headers: { 'X-Request-Id': 'sync-job-42' },
        }).students.list(),
      );

      expect((error as PlatformApiError).requestId).toBe('sync-job-42');
    });

    it('throws PlatformPermissionError with code insufficient_scope when the token lacks students:read', async () => {
      const organization = await server.createOrganization();
      const coursesOnly = await server.createToken(organization.id, [
        'courses:read',
        'students:write',
      ]);

      const error = await thrown(() => client({ token: coursesOnly.token }).students.list());

      expect(error).toBeInstanceOf(PlatformPermissionError);
      const apiError = error as PlatformPermissionError;
      expect(apiError.status).toBe(403);
      expect(apiError.code).toBe('insufficient_scope');
      expect(apiError.headers.get('www-authenticate')).toContain('students:read');
    });

    it('throws PlatformValidationError whose errors name each offending parameter', async () => {
      const error = await thrown(() => client().students.list({ per_page: 1000 }));

      expect(error).toBeInstanceOf(PlatformValidationError);
      const apiError = error as PlatformValidationError;
      expect(apiError.status).toBe(400);
      expect(apiError.code).toBe('validation_error');
      expect(apiError.detail).toContain('per_page');
      expect(apiError.errors).toEqual([expect.objectContaining({ path: 'query.per_page' })]);
      expect(apiError.problem?.errors).toBe(apiError.errors);
    });

    it('surfaces unknown parameters that slipped past the types as a validation error', async () => {
      const error = await thrown(() => client().students.list({ colour: 'blue' } as never));

      expect((error as PlatformValidationError).errors).toEqual([
        expect.objectContaining({ path: 'query.colour', code: 'unknown_parameter' }),
      ]);
    });
  });

  describe('rate limits', () => {
    async function exhaustedToken(): Promise<string> {
      const organization = await server.createOrganization({ rateLimitPerMinute: 2 });
      const limited = (await server.createToken(organization.id, ['students:read'])).token;
      await client({ token: limited }).students.list({ per_page: 1 });
      await client({ token: limited }).students.list({ per_page: 1 });
      return limited;
    }

    it('waits Retry-After between attempts and throws PlatformRateLimitError once maxRetries are used up', async () => {
      const limited = await exhaustedToken();
      const counter = countingFetch();
      const waits: number[] = [];
      const sut = client({
        token: limited,
        fetch: counter.fetch,
        maxRetryAfterSeconds: 120,
        sleep: (ms) => {
          waits.push(ms);
          return Promise.resolve();
        },
      });

      const error = await thrown(() => sut.students.list());

      expect(error).toBeInstanceOf(PlatformRateLimitError);
      const rateLimit = error as PlatformRateLimitError;
      expect(rateLimit.code).toBe('rate_limited');
      expect(rateLimit.retryAfter).toBeGreaterThan(0);
      expect(rateLimit.retryAfter).toBeLessThanOrEqual(60);
      expect(counter.requests).toHaveLength(3);
      expect(waits).toHaveLength(2);
      for (const ms of waits) {
        expect(ms).toBeGreaterThan(0);
        expect(ms).toBeLessThanOrEqual(60_000);
        expect(ms % 1000).toBe(0);
      }
    });

    it('does not wait when Retry-After exceeds maxRetryAfterSeconds', async () => {
      const limited = await exhaustedToken();
      const counter = countingFetch();
      const waits: number[] = [];
      const sut = client({
        token: limited,
        fetch: counter.fetch,
        maxRetryAfterSeconds: 0,
        sleep: (ms) => {
          waits.push(ms);
          return Promise.resolve();
        },
      });

      await expect(sut.students.list()).rejects.toBeInstanceOf(PlatformRateLimitError);
      expect(counter.requests).toHaveLength(1);
      expect(waits).toEqual([]);
    });

    it('throws at once with maxRetries 0', async () => {
      const limited = await exhaustedToken();
      const counter = countingFetch();

      await expect(
        client({ token: limited, fetch: counter.fetch, maxRetries: 0 }).students.list(),
      ).rejects.toBeInstanceOf(PlatformRateLimitError);
      expect(counter.requests).toHaveLength(1);
    });
  });
});
