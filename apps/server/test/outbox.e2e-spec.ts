import { EventSchema, type EventType, isUpdateEventType } from '@platform/contract';
import { EventsService } from '../src/events/events.service';
import { expectStatus, typedClient, type TypedClient } from './support/api';
import { eventsOf, startServer, type TestServer } from './support/server';

/** Runs a write, which must answer `status`, and records which event it must produce. */
type Write = <R extends { status: number; body: unknown }, S extends R['status']>(
  type: EventType,
  request: Promise<R>,
  status: S,
) => Promise<Extract<R, { status: S }>['body']>;

/** A `write` and the events its writes must have produced, in order. */
function recorder() {
  const expected: { type: EventType; data: unknown }[] = [];
  const write: Write = async (type, request, status) => {
    const { body } = expectStatus(await request, status);
    expected.push({ type, data: body });
    return body;
  };
  return { expected, write };
}

/** A payment that succeeds and is partly refunded, and one that fails. */
async function writePayments(write: Write, api: TypedClient, studentId: string) {
  const payment = await write(
    'payment.created',
    api.payments.create({ body: { student_id: studentId, amount: 1000, currency: 'EUR' } }),
    201,
  );
  const ofPayment = { params: { id: payment.id } };
  await write('payment.succeeded', api.payments.succeed(ofPayment), 200);
  await write(
    'payment.refunded',
    api.payments.refund({ ...ofPayment, body: { amount: 100 } }),
    200,
  );
  const failing = await write(
    'payment.created',
    api.payments.create({ body: { student_id: studentId, amount: 5, currency: 'EUR' } }),
    201,
  );
  await write(
    'payment.failed',
    api.payments.fail({ params: { id: failing.id }, body: undefined }),
    200,
  );
}

/** Deletes an exam, a student and a course, and drops and cancels an enrollment. */
async function writeDeletionsAndEnds(
  write: Write,
  api: TypedClient,
  studentId: string,
  courseId: string,
) {
  const spare = await write(
    'exam.created',
    api.exams.create({ body: { course_id: courseId, title: 'Spare', max_score: 1 } }),
    201,
  );
  await write('exam.deleted', api.exams.delete({ params: { id: spare.id } }), 200);
  const other = await write(
    'student.created',
    api.students.create({
      body: { student_number: 'O-2', first_name: 'Gone', last_name: 'Soon' },
    }),
    201,
  );
  await write('student.deleted', api.students.delete({ params: { id: other.id } }), 200);
  const oldCourse = await write(
    'course.created',
    api.courses.create({ body: { code: 'OLD', title: 'Old' } }),
    201,
  );
  await write('course.deleted', api.courses.delete({ params: { id: oldCourse.id } }), 200);
  const second = await write(
    'enrollment.created',
    api.enrollments.create({ body: { student_id: studentId, course_id: courseId } }),
    201,
  );
  await write('enrollment.dropped', api.enrollments.drop({ params: { id: second.id } }), 200);
  const third = await write(
    'enrollment.created',
    api.enrollments.create({ body: { student_id: studentId, course_id: courseId } }),
    201,
  );
  await write('enrollment.cancelled', api.enrollments.cancel({ params: { id: third.id } }), 200);
}

/** Each event has its id and API version, and validates against the contract's catalogue. */
function expectValidEvents(events: Awaited<ReturnType<typeof eventsOf>>) {
  for (const event of events) {
    expect(event.id).toMatch(/^evt_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(event.api_version).toBe('v1');
    // What the SDK will receive validates against the contract's catalogue.
    const parsed = EventSchema.safeParse({
      id: event.id,
      position: event.position,
      // The envelope's cursor is the feed's business (change-feed specs); any string fits here.
      cursor: event.position === null ? null : `${event.position}.cursortag0`,
      object: 'event',
      type: event.type,
      timestamp: new Date().toISOString(),
      api_version: 'v1',
      data: event.data,
      ...(isUpdateEventType(event.type) && { previous_attributes: event.previous_attributes }),
    });
    expect(parsed.success).toBe(true);
    // An update type's are stored with it; the others have none.
    expect(event.previous_attributes !== null).toBe(isUpdateEventType(event.type));
  }
}

describe('events outbox', () => {
  let server: TestServer;
  let orgId: string;
  let api: TypedClient;

  beforeAll(async () => {
    server = await startServer();
    orgId = (await server.createOrganization()).id;
    api = typedClient(server, (await server.createToken(orgId, ['all'])).token);
  });
  afterAll(() => server.close());

  it('every committed change has exactly one event, carrying the resource as the API returned it', async () => {
    const { expected, write } = recorder();

    const student = await write(
      'student.created',
      api.students.create({
        body: { student_number: 'O-1', first_name: 'Out', last_name: 'Box' },
      }),
      201,
    );
    const ofStudent = { params: { id: student.id } };
    await write(
      'student.updated',
      api.students.update({ ...ofStudent, body: { grade_level: 7 } }),
      200,
    );
    const course = await write(
      'course.created',
      api.courses.create({ body: { code: 'OUT', title: 'Outbox 101', capacity: 10 } }),
      201,
    );
    await write(
      'course.updated',
      api.courses.update({ params: { id: course.id }, body: { title: 'Outbox 102' } }),
      200,
    );
    const enrollment = await write(
      'enrollment.created',
      api.enrollments.create({ body: { student_id: student.id, course_id: course.id } }),
      201,
    );
    const ofEnrollment = { params: { id: enrollment.id } };
    await write(
      'enrollment.updated',
      api.enrollments.update({ ...ofEnrollment, body: { notes: 'x' } }),
      200,
    );
    await write('enrollment.active', api.enrollments.activate(ofEnrollment), 200);
    await writePayments(write, api, student.id);
    const exam = await write(
      'exam.created',
      api.exams.create({ body: { course_id: course.id, title: 'Final', max_score: 100 } }),
      201,
    );
    await write(
      'exam.updated',
      api.exams.update({ params: { id: exam.id }, body: { title: 'Final exam' } }),
      200,
    );
    const result = await write(
      'exam_result.created',
      api.examResults.create({ body: { exam_id: exam.id, student_id: student.id, score: 80 } }),
      201,
    );
    const ofResult = { params: { id: result.id } };
    await write('exam_result.published', api.examResults.publish(ofResult), 200);
    await write(
      'exam_result.updated',
      api.examResults.update({ ...ofResult, body: { score: 82 } }),
      200,
    );
    await write('enrollment.completed', api.enrollments.complete(ofEnrollment), 200);
    await writeDeletionsAndEnds(write, api, student.id, course.id);

    // Requests that change nothing or fail produce nothing.
    await api.students.update({ ...ofStudent, body: { grade_level: 7 } });
    await api.enrollments.activate(ofEnrollment);
    await api.students.create({
      body: { student_number: 'O-1', first_name: 'Dup', last_name: 'Licate' },
    });

    const events = await eventsOf(server, orgId);
    expect(events.map((e) => ({ type: e.type, data: e.data }))).toEqual(expected);
    // Each change has its feed position, in the order the changes were made.
    expect(events.map((e) => e.position)).toEqual(events.map((_, i) => i + 1));
    expectValidEvents(events);
  });

  describe('a change that fails after its rows are written leaves neither the change nor an event', () => {
    async function failAfterEventWritten<T>(run: () => Promise<T>): Promise<T> {
      const events = server.app.get(EventsService);
      const original = events.record.bind(events);
      const spy = jest.spyOn(events, 'record').mockImplementationOnce(async (...args) => {
        await original(...args);
        throw new Error('injected failure after the event row was written');
      });
      try {
        return await run();
      } finally {
        spy.mockRestore();
      }
    }

    it('on create', async () => {
      const before = await eventsOf(server, orgId);
      const body = { student_number: 'RB-1', first_name: 'Roll', last_name: 'Back' };
      const res = await failAfterEventWritten(() => api.students.create({ body }));
      const failed = expectStatus(res, 500);
      expect(failed.body.code).toBe('internal_error');
      expect(failed.body.detail).not.toContain('injected');
      const found = await api.students.list({ query: { q: 'RB-1' } });
      expect(expectStatus(found, 200).body.meta.total).toBe(0);
      expect(await eventsOf(server, orgId)).toEqual(before);
      // and the same request succeeds afterwards, with its one event
      expect((await api.students.create({ body })).status).toBe(201);
      expect(await eventsOf(server, orgId)).toHaveLength(before.length + 1);
    });

    it('on a state change', async () => {
      const student = expectStatus(
        await api.students.create({
          body: { student_number: 'RB-2', first_name: 'Roll', last_name: 'Back' },
        }),
        201,
      ).body;
      const payment = expectStatus(
        await api.payments.create({
          body: { student_id: student.id, amount: 700, currency: 'EUR' },
        }),
        201,
      ).body;
      const ofPayment = { params: { id: payment.id } };
      await api.payments.succeed(ofPayment);
      const before = await eventsOf(server, orgId);
      const res = await failAfterEventWritten(() =>
        api.payments.refund({ ...ofPayment, body: { amount: 300 } }),
      );
      expect(res.status).toBe(500);
      expect((await api.payments.retrieve(ofPayment)).body).toMatchObject({
        status: 'succeeded',
        amount_refunded: 0,
      });
      expect(await eventsOf(server, orgId)).toEqual(before);
    });

    it('on delete', async () => {
      const course = expectStatus(
        await api.courses.create({ body: { code: 'RB-C', title: 'Rollback' } }),
        201,
      ).body;
      const ofCourse = { params: { id: course.id } };
      const before = await eventsOf(server, orgId);
      const res = await failAfterEventWritten(() => api.courses.delete(ofCourse));
      expect(res.status).toBe(500);
      expect((await api.courses.retrieve(ofCourse)).status).toBe(200);
      expect(await eventsOf(server, orgId)).toEqual(before);
    });
  });
});
