/**
 * External ids through the TypeScript SDK against the real server: a batch upsert by
 * `external_id`, a record read back as `ext:<external_id>`, and a reference filter by ext:.
 */
import { startTestServer, type TestServer } from '@platform/server/testing';
import { createClient, type PlatformClient, PlatformValidationError } from './index';

let server: TestServer;
let sdk: PlatformClient;

beforeAll(async () => {
  server = await startTestServer({
    postgresAdminUrl: process.env.TEST_DATABASE_URL,
    redisUrl: process.env.TEST_REDIS_URL,
  });
  const organization = await server.createOrganization();
  const { token } = await server.createToken(organization.id, ['all']);
  sdk = createClient({ baseUrl: server.url, token });
});

afterAll(async () => {
  await server?.close();
});

const person = (key: string, last: string) => ({
  external_id: key,
  student_number: `N-${key}`,
  first_name: 'Ada',
  last_name: last,
});

it('batchUpsert creates, updates and leaves records by external_id, one result per item', async () => {
  const first = await sdk.students.batchUpsert({
    body: { items: [person('SDK-1', 'One'), person('SDK-2', 'Two')] },
  });
  expect(first.counts).toEqual({ created: 2, updated: 0, unchanged: 0, failed: 0 });

  const second = await sdk.students.batchUpsert({
    body: {
      items: [
        { external_id: 'SDK-1', last_name: 'Renamed' },
        person('SDK-2', 'Two'),
        { external_id: 'SDK-3', first_name: 'No last name' },
      ],
    },
  });
  expect(second.data.map((r) => [r.external_id, r.status])).toEqual([
    ['SDK-1', 'updated'],
    ['SDK-2', 'unchanged'],
    ['SDK-3', 'failed'],
  ]);
  expect(second.data[2]!.error?.errors.map((e) => e.path)).toContain('body.items.2.last_name');

  const one = await sdk.students.retrieve({ params: { id: 'ext:SDK-1' } });
  expect(one).toMatchObject({ id: first.data[0]!.id, last_name: 'Renamed' });
});

it('filters a list by ext: in a reference filter, and refuses a malformed key by name', async () => {
  await sdk.students.create({ body: person('SDK-REF', 'Ref') });
  await sdk.courses.create({ body: { code: 'SDK-C', title: 'SDK', external_id: 'class-sdk' } });
  const enrollment = await sdk.enrollments.create({
    body: { student_id: 'ext:SDK-REF', course_id: 'ext:class-sdk' },
  });
  const page = await sdk.enrollments.list({ student_id: 'ext:SDK-REF' });
  expect(page.data.map((e) => e.id)).toEqual([enrollment.id]);
  const bad = await sdk.enrollments.list({ student_id: 'ext:bad/key' }).catch((e: unknown) => e);
  expect(bad).toBeInstanceOf(PlatformValidationError);
  expect((bad as PlatformValidationError).message).toContain('student_id');
});

it('batchUpsert of exams and results takes ext: references and keeps one result per student', async () => {
  await sdk.students.create({ body: person('SDK-EX', 'Examined') });
  await sdk.courses.create({ body: { code: 'SDK-E', title: 'SDK', external_id: 'class-exam' } });
  await sdk.enrollments.create({
    body: { student_id: 'ext:SDK-EX', course_id: 'ext:class-exam', status: 'active' },
  });
  const exams = await sdk.exams.batchUpsert({
    body: {
      items: [{ external_id: 'exam-1', course_id: 'ext:class-exam', title: 'Quiz', max_score: 10 }],
    },
  });
  expect(exams.data.map((r) => r.status)).toEqual(['created']);
  const item = (key: string, score: number) => ({
    external_id: key,
    exam_id: 'ext:exam-1',
    student_id: 'ext:SDK-EX',
    score,
  });
  const results = await sdk.examResults.batchUpsert({
    body: { items: [item('res-1', 8), item('res-2', 9)] },
  });
  expect(results.data.map((r) => [r.status, r.error?.status ?? null])).toEqual([
    ['created', null],
    ['failed', 409],
  ]);
  const result = await sdk.examResults.retrieve({ params: { id: 'ext:res-1' } });
  expect(result).toMatchObject({ id: results.data[0]!.id, score: 8, status: 'draft' });
});

it('batchUpsert of enrollments and payments moves records on file to the state an item names', async () => {
  await sdk.students.create({ body: person('SDK-PAY', 'Payer') });
  await sdk.courses.create({ body: { code: 'SDK-P', title: 'SDK', external_id: 'class-pay' } });
  const enrollment = {
    external_id: 'enr-pay',
    student_id: 'ext:SDK-PAY',
    course_id: 'ext:class-pay',
  };
  const created = await sdk.enrollments.batchUpsert({ body: { items: [enrollment] } });
  expect(created.data.map((r) => r.status)).toEqual(['created']);
  const dropped = await sdk.enrollments.batchUpsert({
    body: { items: [{ external_id: 'enr-pay', status: 'dropped' }] },
  });
  expect(dropped.data.map((r) => r.status)).toEqual(['updated']);
  expect((await sdk.enrollments.retrieve({ params: { id: 'ext:enr-pay' } })).status).toBe(
    'dropped',
  );

  const payment = { external_id: 'inv-1', student_id: 'ext:SDK-PAY', amount: 900, currency: 'EUR' };
  await sdk.payments.batchUpsert({ body: { items: [{ ...payment, status: 'failed' }] } });
  const again = await sdk.payments
    .batchUpsert({
      body: {
        items: [
          { ...payment, status: 'failed' },
          { ...payment, external_id: 'inv-2', amount: 0 },
        ],
      },
    })
    .catch((e: unknown) => e);
  // A body that does not parse (amount 0) is refused whole: nothing of it is written.
  expect(again).toBeInstanceOf(PlatformValidationError);
  const same = await sdk.payments.batchUpsert({
    body: { items: [{ ...payment, status: 'failed' }] },
  });
  expect(same.data.map((r) => r.status)).toEqual(['unchanged']);
});
