/**
 * Property-based fuzzing from the contract (fast-check): every route gets generated bad input
 * (any JSON for the body, random query parameters, hostile path ids, raw bytes), and must answer
 * with a problem+json 4xx that matches the contract's error schema: never a 5xx, never a hang.
 * Valid bodies generated from the contract's own create schemas must succeed and read back the
 * same. A new route is fuzzed the day it is added to the contract.
 */
import {
  contract,
  CourseCreateSchema,
  dateSchema,
  ExamCreateSchema,
  operationMetadata,
  WebhookEndpointCreateSchema,
  ProblemSchema,
  StudentCreateSchema,
} from '@platform/contract';
import { type AppRoute, type AppRouter, isAppRoute, isZodType } from '@ts-rest/core';
import fc from 'fast-check';
import type { ZodTypeAny } from 'zod';
import { ZodFastCheck } from 'zod-fast-check';
import { startServer, type TestServer } from './support/server';

function walk(router: AppRouter): AppRoute[] {
  return Object.values(router).flatMap((entry) => (isAppRoute(entry) ? [entry] : walk(entry)));
}

const ROUTES = walk(contract).map((route) => ({ route, name: `${route.method} ${route.path}` }));
const RUNS = 25;
/** Longer than any honest request takes here: a request past it counts as hung. */
const HANG_MS = 5000;

describe('fuzzing every route of the contract', () => {
  let server: TestServer;
  let token: string;
  /** A real record of some kinds, so bad input also reaches routes with a valid id. */
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    server = await startServer({ WEBHOOK_DISPATCHER: 'false' });
    const org = await server.createOrganization({ plan: 'enterprise', rateLimitPerMinute: 1e6 });
    // A member's token (an admin's: every scope), so the routes about the calling member
    // (`/v1/user`) get past the member check and their input is what is tested.
    const admin = await server.createUser(
      org.id,
      'fuzz@school.example',
      'amber kettle fossil drum',
    );
    ({ token } = await server.createToken(org.id, ['all'], { userId: admin.id }));
    const [student] = await server.insertStudents(org.id, 1);
    ids.students = student!.id;
  });
  afterAll(() => server.close());

  async function send(
    method: string,
    path: string,
    init: { body?: string | Uint8Array; contentType?: string; auth?: boolean } = {},
  ) {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), HANG_MS);
    try {
      const res = await fetch(`${server.url}${path}`, {
        method,
        signal: controller.signal,
        headers: {
          ...(init.auth !== false && { Authorization: `Bearer ${token}` }),
          ...(init.body !== undefined && {
            'Content-Type': init.contentType ?? 'application/json',
          }),
        },
        ...(init.body !== undefined && method !== 'GET' && { body: init.body }),
      });
      const text = await res.text();
      return { status: res.status, type: res.headers.get('content-type') ?? '', text };
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * The promise: a success the route's contract describes (its status, and a body its response
   * schema accepts), or a 4xx problem the contract describes. Never a 5xx.
   */
  function expectHandled(
    route: AppRoute,
    res: { status: number; type: string; text: string },
    what: string,
  ): void {
    if (res.status >= 500) throw new Error(`${what} → ${res.status} ${res.text}`);
    if (res.status >= 400) {
      expect(res.type).toMatch(/^application\/problem\+json/);
      const parsed = ProblemSchema.safeParse(JSON.parse(res.text));
      if (!parsed.success) throw new Error(`${what} → a problem outside the schema: ${res.text}`);
      expect(parsed.data.status).toBe(res.status);
      return;
    }
    const schema = (route.responses as Record<number, unknown>)[res.status];
    if (schema === undefined) throw new Error(`${what} → ${res.status}, not in the contract`);
    if (!isZodType(schema)) return; // a response without a body (c.noBody())
    const parsed = schema.safeParse(JSON.parse(res.text));
    if (!parsed.success) throw new Error(`${what} → a ${res.status} body outside the contract`);
  }

  const concrete = (route: AppRoute, id: string) =>
    route.path.replace(':id', encodeURIComponent(id));

  const hostileString = fc.oneof(
    fc.string({ maxLength: 40 }),
    fc.fullUnicodeString({ maxLength: 40 }),
    fc.string({ unit: 'binary', maxLength: 40 }),
    fc.constantFrom('', ' ', '..', '%00', '\u0000', 'stu_' + 'A'.repeat(500), '-1', '1e309'),
  );
  const pad = (n: number) => String(n).padStart(2, '0');
  /**
   * RFC 3339 date-times of any year, with Z or any two-digit offset, and whether the API must
   * take them: an offset within ±23:59 naming an instant in years 0000-9999 (UTC).
   */
  const dateTimeCase = fc
    .tuple(
      fc.date({
        min: new Date('0000-01-01T00:00:00Z'),
        max: new Date('9999-12-31T23:59:59Z'),
        noInvalidDate: true,
      }),
      fc.option(fc.tuple(fc.constantFrom(1, -1), fc.nat(99), fc.nat(99)), { nil: undefined }),
    )
    .map(([local, offset]) => {
      if (!offset) return { value: `${local.toISOString().slice(0, 19)}Z`, valid: true };
      const [sign, h, m] = offset;
      const instant = local.getTime() - sign * (h * 60 + m) * 60_000;
      return {
        value: `${local.toISOString().slice(0, 19)}${sign > 0 ? '+' : '-'}${pad(h)}:${pad(m)}`,
        valid:
          h <= 23 &&
          m <= 59 &&
          instant >= Date.parse('0000-01-01T00:00:00Z') &&
          instant <= Date.parse('9999-12-31T23:59:59.999Z'),
      };
    });
  const dateTime = dateTimeCase.map(({ value }) => value);
  /** Strings with an unpaired UTF-16 surrogate, which JSON can carry as `\ud800`. */
  const unpairedSurrogate = fc
    .tuple(
      fc.string({ maxLength: 8 }),
      fc.constantFrom('\ud800', '\udbff', '\udc00', '\udfff'),
      fc.string({ maxLength: 8 }),
    )
    .map((parts) => parts.join(''));
  const queryValue = fc.oneof(
    hostileString,
    fc.integer().map(String),
    fc.double().map(String),
    dateTime,
    fc.constantFrom('9'.repeat(400), '-0', 'null', '[]', 'true'),
  );
  const queryKey = fc.oneof(
    fc.constantFrom(
      'page',
      'per_page',
      'sort',
      'q',
      'status',
      'created_at[gte]',
      'updated_since',
      'type',
    ),
    fc.string({ minLength: 1, maxLength: 12 }),
  );
  const queryString = fc
    .tuple(
      fc.array(fc.tuple(queryKey, queryValue), { maxLength: 4 }),
      // Percent-encoded bytes that are not UTF-8, which URLSearchParams cannot produce.
      fc.option(fc.constantFrom('q=%ED%A0%80', 'page=%FF', '%C3%28=1', 'sort=%E2%82'), {
        nil: undefined,
      }),
    )
    .map(([pairs, raw]) =>
      [new URLSearchParams(pairs).toString(), raw].filter((part) => part).join('&'),
    );
  const anyJson = fc.oneof(
    fc.jsonValue({ maxDepth: 4 }),
    fc.dictionary(fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 8 }),
    fc.record(
      {
        amount: fc.oneof(fc.integer(), fc.double(), fc.constant(Number.MAX_SAFE_INTEGER * 10)),
        score: fc.double(),
        student_id: hostileString,
        status: hostileString,
        url: hostileString,
        events: fc.array(hostileString, { maxLength: 3 }),
        first_name: fc.oneof(fc.string({ maxLength: 10_000 }), unpairedSurrogate),
        last_name: unpairedSurrogate,
        expires_at: dateTime,
      },
      { requiredKeys: [] },
    ),
  );

  it.each(ROUTES)(
    '$name: any JSON body and query → a described 4xx or a success',
    async ({ route, name }) => {
      await fc.assert(
        fc.asyncProperty(anyJson, queryString, fc.boolean(), async (body, query, realId) => {
          const id = realId && ids.students ? ids.students : 'stu_01JD6Y3ZK8R5V2N3M4P5Q6R7S8';
          const path = `${concrete(route, id)}${query ? `?${query}` : ''}`;
          const res = await send(route.method, path, { body: JSON.stringify(body) });
          expectHandled(route, res, `${name} ${path} ${JSON.stringify(body).slice(0, 200)}`);
        }),
        { numRuns: RUNS },
      );
    },
  );

  // Impossible offsets matched everything on SQLite and were a 500 on PostgreSQL.
  it.each(
    ROUTES.filter(({ route }) => operationMetadata(route)?.list && !route.path.includes(':id')),
  )(
    '$name: a date-time filter of any year and offset → 200 if it names a real instant, else a 400 naming it',
    async ({ route, name }) => {
      const key = fc.constantFrom(
        'created_at[gte]',
        'created_at[lt]',
        'updated_at[gt]',
        'updated_at[lte]',
        'updated_since',
      );
      await fc.assert(
        fc.asyncProperty(key, dateTimeCase, async (parameter, { value, valid }) => {
          const path = `${route.path}?${new URLSearchParams({ [parameter]: value }).toString()}`;
          const res = await send('GET', path);
          expectHandled(route, res, `${name} ${path}`);
          expect(res.status).toBe(valid ? 200 : 400);
          if (!valid) expect(JSON.parse(res.text).errors[0].path).toBe(`query.${parameter}`);
        }),
        { numRuns: RUNS },
      );
    },
  );

  it.each(ROUTES.filter(({ route }) => route.path.includes(':id')))(
    '$name: hostile path ids → 400 or 404, never a 5xx',
    async ({ route, name }) => {
      await fc.assert(
        // '', '.' and '..' are not ids but other URLs (the collection, after normalisation).
        fc.asyncProperty(
          hostileString.filter((id) => !['', '.', '..'].includes(id)),
          async (id) => {
            const res = await send(route.method, concrete(route, id), {
              ...(route.method !== 'GET' && { body: '{}' }),
            });
            expectHandled(route, res, `${name} id=${JSON.stringify(id)}`);
            expect([400, 404]).toContain(res.status);
          },
        ),
        { numRuns: RUNS },
      );
    },
  );

  const writes = ROUTES.filter(({ route }) => route.method !== 'GET');

  it.each(writes)(
    '$name: raw bytes, deep JSON, oversized and mislabelled bodies',
    async ({ route, name }) => {
      const path = concrete(route, ids.students!);
      await fc.assert(
        fc.asyncProperty(fc.uint8Array({ maxLength: 64 }), async (bytes) => {
          expectHandled(route, await send(route.method, path, { body: bytes }), `${name} bytes`);
        }),
        { numRuns: 10 },
      );
      const invalidUtf8 = new Uint8Array([
        0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc3, 0x28, 0xff, 0x22, 0x7d,
      ]);
      const cases = [
        {
          what: 'invalid UTF-8',
          body: invalidUtf8 as string | Uint8Array,
          status: [400, 404, 409],
        },
        {
          what: 'deep JSON',
          body: `${'['.repeat(100_000)}${']'.repeat(100_000)}`,
          status: [400, 404, 409, 413],
        },
        {
          what: 'control characters',
          body: '{"first_name":"\\u0000\\u0007\\u001b"}',
          status: [400, 404, 409],
        },
        { what: 'oversized', body: `{"x":"${'a'.repeat(1_100_000)}"}`, status: [413] },
      ];
      for (const c of cases) {
        const res = await send(route.method, path, { body: c.body });
        expectHandled(route, res, `${name} ${c.what}`);
        expect(c.status.concat(422)).toContain(res.status);
      }
      const text = await send(route.method, path, { body: 'a=1', contentType: 'text/plain' });
      expectHandled(route, text, `${name} text/plain`);
      expect(text.status).toBe(415);
    },
  );

  it.each(ROUTES.filter(({ route }) => route.method === 'GET' && !route.path.includes(':id')))(
    '$name: a repeated query parameter is a 400 naming it',
    async ({ route }) => {
      const res = await send('GET', `${route.path}?page=1&page=2`);
      expect(res.status).toBe(400);
      expect(res.text).toContain('page');
    },
  );

  describe('valid input generated from the create schemas', () => {
    // zod-fast-check cannot invert `.date()`; calendar dates are generated directly.
    const zfc = ZodFastCheck().override(
      dateSchema,
      fc
        .date({ min: new Date('1900-01-01'), max: new Date('2100-12-31'), noInvalidDate: true })
        .map((d) => d.toISOString().slice(0, 10)),
    );
    let n = 0;
    /** A generated external id made unique in the organization, as the unique keys below are. */
    const unique = (body: Record<string, any>) =>
      typeof body.external_id === 'string'
        ? { external_id: `${body.external_id.slice(0, 100)}-F${++n}` }
        : {};

    /**
     * Each create schema, and what a schema of single fields cannot know: uniqueness in the
     * organization, references to real records, rules across fields, reachable URLs.
     */
    const CASES: {
      name: string;
      path: string;
      schema: ZodTypeAny;
      /** What to generate from, when a field cannot be generated (ids match a pattern). */
      generate?: ZodTypeAny;
      complete(body: Record<string, any>): Record<string, any>;
      /** Delete what was created (a per-organization limit would stop the run otherwise). */
      deleteAfter?: boolean;
      /** Fields the create response has and a retrieve does not. */
      createOnly?: string[];
    }[] = [
      {
        name: 'students',
        path: '/v1/students',
        schema: StudentCreateSchema,
        complete: (body) => ({ ...body, ...unique(body), student_number: `F-${++n}` }),
      },
      {
        name: 'courses',
        path: '/v1/courses',
        schema: CourseCreateSchema,
        complete: (body) => {
          const course: Record<string, any> = { ...body, ...unique(body), code: `F-${++n}` };
          if (course.start_date && course.end_date && course.end_date < course.start_date) {
            [course.start_date, course.end_date] = [course.end_date, course.start_date];
          }
          return course;
        },
      },
      {
        name: 'exams',
        path: '/v1/exams',
        schema: ExamCreateSchema,
        generate: ExamCreateSchema.omit({ course_id: true }),
        complete: (body) => ({ ...body, ...unique(body), course_id: ids.courses }),
      },
      {
        name: 'webhook endpoints',
        path: '/v1/webhook_endpoints',
        schema: WebhookEndpointCreateSchema,
        // *.test looks public to the SSRF guard in tests and is unreachable (tooling/hermetic).
        complete: (body) => ({ ...body, url: `https://hooks.school.test/hooks/${++n}` }),
        createOnly: ['secret'],
        deleteAfter: true,
      },
    ];

    beforeAll(async () => {
      const course = await send('POST', '/v1/courses', {
        body: JSON.stringify({ code: 'FUZZ-BASE', title: 'Fuzzing' }),
      });
      ids.courses = JSON.parse(course.text).id;
    });

    it.each(CASES)('$name: every generated create succeeds and reads back the same', async (c) => {
      // The generator's output that the schema itself accepts (its emails, for one, are looser).
      const arbitrary = zfc
        .inputOf(c.generate ?? c.schema)
        .map((generated) => c.complete(generated as Record<string, any>))
        .filter((value) => c.schema.safeParse(value).success);
      await fc.assert(
        fc.asyncProperty(arbitrary, async (generated) => {
          const body = generated;
          const created = await send('POST', c.path, { body: JSON.stringify(body) });
          if (created.status !== 201)
            throw new Error(`${created.status} ${created.text} for ${JSON.stringify(body)}`);
          const record = JSON.parse(created.text);
          // What was sent reads back, defaults applied; an omitted optional field reads as null.
          for (const [field, value] of Object.entries(c.schema.parse(body) as object)) {
            expect(record[field]).toEqual(value ?? null);
          }
          const read = await send('GET', `${c.path}/${record.id}`);
          for (const field of c.createOnly ?? []) delete record[field];
          expect(JSON.parse(read.text)).toEqual(record);
          if (c.deleteAfter)
            expect((await send('DELETE', `${c.path}/${record.id}`)).status).toBe(200);
        }),
        { numRuns: 30 },
      );
    });
  });
});
