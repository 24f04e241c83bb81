// Type-level tests, checked by `tsc --noEmit` (pnpm typecheck), never run. Each
// `@ts-expect-error` fails the typecheck if the line below it starts compiling.
import { initContract } from '@ts-rest/core';
import {
  createClient,
  type Course,
  type Enrollment,
  type Event,
  type EventOf,
  type EventType,
  type Exam,
  type ExamResult,
  type OAuthClientResource,
  type Payment,
  type PersonalAccessTokenResource,
  type PrefixedId,
  type Student,
  type TokenInfo,
  type WebhookDelivery,
  type WebhookEndpoint,
} from './index';
import { createClientFor } from './client-for';

const client = createClient({ baseUrl: 'http://127.0.0.1:1', token: 'pat_x' });

export async function typeTests(): Promise<void> {
  const page = await client.students.list({ page: 2, per_page: 10, status: 'active' });
  const first: Student | undefined = page.data[0];
  const total: number = page.meta.total;
  const next: string | null = page.links.next;

  await client.students.list();
  await client.students.list({
    query: { q: 'ada', sort: '-last_name' },
    fetchOptions: { signal: AbortSignal.timeout(1000) },
  });
  await client.students.list({ 'created_at[gte]': '2026-01-01T00:00:00Z' });

  // @ts-expect-error page is a number, not a string
  await client.students.list({ page: '2' });
  // @ts-expect-error per_page is a number
  await client.students.list({ query: { per_page: 'ten' } });
  // @ts-expect-error unknown query parameter
  await client.students.list({ pages: 2 });
  // @ts-expect-error status takes a string
  await client.students.list({ status: 1 });
  // several values are comma-separated, and each is checked against the enum's first value
  await client.students.list({ status: 'active,graduated', grade_level: 9 });
  // @ts-expect-error 'expelled' is not a student status
  await client.students.list({ status: 'expelled' });
  // @ts-expect-error range filters exist only for created_at and updated_at
  await client.students.list({ 'last_name[gte]': 'A' });
  // @ts-expect-error the body is typed: students have no `name`
  void page.data[0]?.name;

  for await (const student of client.students.listAll({ status: 'graduated', per_page: 50 })) {
    const id: string = student.id;
    // @ts-expect-error items are students, typed
    const wrong: number = student.first_name;
    void id;
    void wrong;
  }
  // @ts-expect-error listAll takes the same query types
  client.students.listAll({ per_page: '50' });
  // @ts-expect-error only list routes get an `All` method
  void client.students.getAll;

  // A nested list takes the route's arguments: its path params, and the query beside them.
  for await (const delivery of client.webhookEndpoints.deliveriesAll({
    params: { id: 'whe_01JD6Y3ZK8R5V2N3M4P5Q6R7S8' },
    query: { status: 'failed' },
  })) {
    const attempts: number = delivery.attempts.length;
    void attempts;
  }
  // @ts-expect-error a nested list needs its endpoint id
  client.webhookEndpoints.deliveriesAll({ status: 'failed' });
  // @ts-expect-error the webhook secret is only on create and rotate responses
  void (await client.webhookEndpoints.retrieve({ params: { id: 'x' } })).secret;

  void first;
  void total;
  void next;
}

// A router the SDK has never seen gets typed methods too: params and bodies are required where
// the route needs them, and only list routes get an `All` method.
const c = initContract();
const futureContract = c.router({
  courses: {
    create: {
      method: 'POST',
      path: '/v1/courses',
      body: c.type<{ title: string }>(),
      responses: { 201: c.type<{ id: string; title: string }>() },
      metadata: { scope: 'courses:write' } as const,
    },
    retrieve: {
      method: 'GET',
      path: '/v1/courses/:id',
      responses: { 200: c.type<{ id: string; title: string }>() },
      metadata: { scope: 'courses:read' } as const,
    },
  },
});
const future = createClientFor(futureContract, { baseUrl: 'http://127.0.0.1:1', token: 'pat_x' });

export async function futureTypeTests(): Promise<void> {
  const created = await future.courses.create({
    body: { title: 'Algebra' },
    extraHeaders: { 'Idempotency-Key': 'k' },
  });
  const title: string = created.title;
  const course = await future.courses.retrieve({ params: { id: created.id } });

  // @ts-expect-error the body is required
  await future.courses.create();
  // @ts-expect-error title is a string
  await future.courses.create({ body: { title: 1 } });
  // @ts-expect-error the path parameter is required
  await future.courses.retrieve({});
  // @ts-expect-error not a list route
  void future.courses.createAll;

  void title;
  void course;
}

// Ids are typed with their prefixes, so one resource's id goes where that kind of id is
// expected, and `sort` takes only the collection's sortable fields.
export async function idAndSortTypeTests(): Promise<void> {
  const student = await client.students.retrieve({
    params: { id: 'stu_01JD6Y3ZK8R5V2N3M4P5Q6R7S8' },
  });
  const sid: PrefixedId<'student'> = student.id;
  const sidText: `stu_${string}` = student.id;
  // What used to be TS2769: a student's id as the payments filter.
  await client.payments.list({ student_id: student.id });
  await client.enrollments.list({ student_id: student.id, sort: '-created_at' });
  // A reference filter also takes the record's own key, as ext:<external_id>.
  await client.enrollments.list({ student_id: 'ext:SIS-0042', course_id: 'ext:class-7' });
  // @ts-expect-error an id filter without external ids takes only the prefixed id
  await client.auditEvents.list({ user_id: 'ext:someone' });
  const payment = (await client.payments.list({ student_id: sid })).data[0];
  if (payment) {
    const forStudent: Student['id'] = payment.student_id;
    await client.students.retrieve({ params: { id: payment.student_id } });
    const enrollmentId: `enr_${string}` | null = payment.enrollment_id;
    // @ts-expect-error a payment id is not a student id
    await client.payments.list({ student_id: payment.id });
    void forStudent;
    void enrollmentId;
  }
  const course: Course | undefined = (await client.courses.list()).data[0];
  if (course) {
    // @ts-expect-error a course id is not a student id
    await client.enrollments.list({ student_id: course.id });
    await client.enrollments.list({ course_id: course.id });
  }
  // @ts-expect-error an id from a response is not just any string: it has its prefix
  const notPrefixed: `pay_${string}` = student.id;
  // Ids you hold as plain strings still go into bodies and path parameters (the server checks them).
  const stored: string = 'stu_01JD6Y3ZK8R5V2N3M4P5Q6R7S8';
  await client.enrollments.create({ body: { student_id: stored, course_id: 'crs_x' } });

  await client.students.list({ sort: 'last_name' });
  await client.students.list({ sort: '-created_at,last_name' });
  await client.payments.list({ sort: '-amount' });
  // @ts-expect-error students are not sortable by amount
  await client.students.list({ sort: 'amount' });
  // @ts-expect-error payments are not sortable by last_name
  await client.payments.list({ query: { sort: '-last_name' } });
  // @ts-expect-error a sort key is a field name, optionally prefixed with -
  await client.students.list({ sort: '+last_name' });

  // Every resource and event type comes from the SDK itself.
  const event = {} as Event;
  if (event.type === 'payment.succeeded') {
    const paid: Payment = event.data;
    void paid;
  }
  const types: EventType[] = ['enrollment.created'];
  const endpoint = {} as WebhookEndpoint;
  const delivery = {} as WebhookDelivery;
  const info = {} as TokenInfo;
  const enrollment = {} as Enrollment;
  const exam = {} as Exam;
  const result = {} as ExamResult;
  const pat = {} as PersonalAccessTokenResource;
  const oauthClient = {} as OAuthClientResource;
  const refunded = {} as EventOf<'payment.refunded'>;
  void [sidText, notPrefixed, types, endpoint, delivery, info, enrollment, exam, result, pat];
  void [oauthClient, refunded];
}

// withResponse() and per-call options are typed too.
export async function responseTypeTests(): Promise<void> {
  const raw = await client.students
    .list({ per_page: 5 }, { timeoutMs: 5000, maxRetries: 0 })
    .withResponse();
  const students: Student[] = raw.data.data;
  const status: number = raw.status;
  const remaining: string | null = raw.headers.get('x-ratelimit-remaining');
  const requestId: string | undefined = raw.requestId;
  const created = await client.students
    .create(
      { body: { student_number: 'S-1', first_name: 'Ada', last_name: 'Lovelace' } },
      { idempotencyKey: 'row-1' },
    )
    .withResponse();
  const replayed: boolean = created.headers.get('idempotent-replayed') === 'true';
  // @ts-expect-error request options are maxRetries, timeoutMs and idempotencyKey
  await client.students.list({}, { timeout: 5 });
  // @ts-expect-error fetch options go in fetchOptions, not beside the query
  await client.students.list({ per_page: 5, signal: AbortSignal.timeout(1000) });
  void [students, status, remaining, requestId, replayed];
}
