/**
 * The SDK's generated operations for the whole domain, against the real server: path params,
 * bodies, transitions, typed errors, and listAll on a collection other than students.
 */
import { EventSchema, type EventOf } from '@platform/contract';
import { startTestServer, type TestServer } from '@platform/server/testing';
import { createClient, PlatformApiError, type PlatformClient } from './index';

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

it('drives a student from creation through enrollment, payment and a published result', async () => {
  const student = await sdk.students.create({
    body: { student_number: 'SDK-1', first_name: 'Sam', last_name: 'Dk' },
  });
  expect(student).toMatchObject({ object: 'student', status: 'active' });
  const course = await sdk.courses.create({
    body: { code: 'SDK-101', title: 'Typed clients', capacity: 5 },
  });
  const enrollment = await sdk.enrollments.create({
    body: { student_id: student.id, course_id: course.id },
  });
  const active = await sdk.enrollments.activate({ params: { id: enrollment.id } });
  expect(active.status).toBe('active');

  const payment = await sdk.payments.create({
    body: { student_id: student.id, enrollment_id: enrollment.id, amount: 45_000, currency: 'EUR' },
  });
  await sdk.payments.succeed({ params: { id: payment.id } });
  const refunded = await sdk.payments.refund({
    params: { id: payment.id },
    body: { amount: 5_000 },
  });
  expect(refunded).toMatchObject({ status: 'refunded', amount_refunded: 5_000 });

  const exam = await sdk.exams.create({
    body: { course_id: course.id, title: 'Quiz', max_score: 10 },
  });
  const result = await sdk.examResults.create({
    body: { exam_id: exam.id, student_id: student.id, score: 9, grade: 'A' },
  });
  const published = await sdk.examResults.publish({ params: { id: result.id } });
  expect(published.status).toBe('published');

  expect(await sdk.students.retrieve({ params: { id: student.id } })).toEqual(student);
  const updated = await sdk.students.update({
    params: { id: student.id },
    body: { preferred_name: 'Sammy' },
  });
  expect(updated.preferred_name).toBe('Sammy');
});

it('turns a refused transition into a PlatformApiError with the problem', async () => {
  const student = await sdk.students.create({
    body: { student_number: 'SDK-2', first_name: 'Ida', last_name: 'Err' },
  });
  const course = await sdk.courses.create({ body: { code: 'SDK-102', title: 'Errors' } });
  const enrollment = await sdk.enrollments.create({
    body: { student_id: student.id, course_id: course.id },
  });
  const error = await sdk.enrollments
    .complete({ params: { id: enrollment.id } })
    .catch((e: unknown) => e);
  expect(error).toBeInstanceOf(PlatformApiError);
  expect((error as PlatformApiError).status).toBe(409);
  expect((error as PlatformApiError).code).toBe('invalid_state_transition');
  const missing = await sdk.courses
    .retrieve({ params: { id: 'crs_01M81AW4437YFWV4VE6WMBH8MY' } })
    .catch((e: unknown) => e);
  expect((missing as PlatformApiError).code).toBe('not_found');
});

it('listAll iterates any collection, here courses', async () => {
  for (let i = 0; i < 7; i++)
    await sdk.courses.create({ body: { code: `ALL-${i}`, title: `Course ${i}` } });
  const codes: string[] = [];
  for await (const course of sdk.courses.listAll({ q: 'ALL-', per_page: 3 }))
    codes.push(course.code);
  expect(codes.sort()).toEqual(['ALL-0', 'ALL-1', 'ALL-2', 'ALL-3', 'ALL-4', 'ALL-5', 'ALL-6']);
});

it("types a received event by narrowing on its type (the contract's catalogue)", () => {
  const raw: unknown = {
    id: 'evt_01M81AW4437YFWV4VE6WMBH8MY',
    position: 7,
    cursor: '7.Xk3aB9_-q1',
    object: 'event',
    type: 'payment.refunded',
    timestamp: '2026-11-22T10:00:00.000Z',
    api_version: 'v1',
    data: {
      id: 'pay_01M81AW4437YFWV4VE6WMBH8MY',
      object: 'payment',
      external_id: null,
      student_id: 'stu_01M81AW4437YFWV4VE6WMBH8MY',
      enrollment_id: null,
      amount: 1000,
      currency: 'EUR',
      status: 'refunded',
      amount_refunded: 400,
      description: null,
      external_reference: null,
      failure_reason: null,
      succeeded_at: '2026-11-22T09:00:00.000Z',
      failed_at: null,
      refunded_at: '2026-11-22T10:00:00.000Z',
      created_at: '2026-11-22T08:00:00.000Z',
      updated_at: '2026-11-22T10:00:00.000Z',
    },
    previous_attributes: {
      status: 'succeeded',
      amount_refunded: 0,
      refunded_at: null,
      updated_at: '2026-11-22T09:00:00.000Z',
    },
  };
  const event = EventSchema.parse(raw);
  if (event.type !== 'payment.refunded') throw new Error('expected a payment.refunded event');
  const refunded: EventOf<'payment.refunded'> = event;
  expect(refunded.data.amount_refunded).toBe(400);
  expect(refunded.previous_attributes).toMatchObject({ status: 'succeeded', amount_refunded: 0 });
  expect(EventSchema.safeParse({ ...(raw as object), type: 'payment.exploded' }).success).toBe(
    false,
  );
});
