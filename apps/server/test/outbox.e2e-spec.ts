import { EventSchema } from '@platform/contract';
import { EventsService } from '../src/events/events.service';
import { client, eventsOf, startServer, type TestServer } from './support/server';

describe('events outbox', () => {
  let server: TestServer;
  let orgId: string;
  let api: ReturnType<typeof client>;

  beforeAll(async () => {
    server = await startServer();
    orgId = (await server.createOrganization()).id;
    api = client(server, (await server.createToken(orgId, ['all'])).token);
  });
  afterAll(() => server.close());

  it('every committed change has exactly one event, carrying the resource as the API returned it', async () => {
    const expected: { type: string; data: unknown }[] = [];
    /** Runs a write and records which event it must produce. */
    const write = async (type: string, request: Promise<{ status: number; body: any }>) => {
      const res = await request;
      expect(res.status).toBeLessThan(300);
      expected.push({ type, data: res.body });
      return res.body;
    };

    const student = await write(
      'student.created',
      api.post('/v1/students', { student_number: 'O-1', first_name: 'Out', last_name: 'Box' }),
    );
    await write('student.updated', api.patch(`/v1/students/${student.id}`, { grade_level: 7 }));
    const course = await write(
      'course.created',
      api.post('/v1/courses', { code: 'OUT', title: 'Outbox 101', capacity: 10 }),
    );
    await write('course.updated', api.patch(`/v1/courses/${course.id}`, { title: 'Outbox 102' }));
    const enrollment = await write(
      'enrollment.created',
      api.post('/v1/enrollments', { student_id: student.id, course_id: course.id }),
    );
    await write(
      'enrollment.updated',
      api.patch(`/v1/enrollments/${enrollment.id}`, { notes: 'x' }),
    );
    await write('enrollment.active', api.post(`/v1/enrollments/${enrollment.id}/activate`));
    const payment = await write(
      'payment.created',
      api.post('/v1/payments', { student_id: student.id, amount: 1000, currency: 'EUR' }),
    );
    await write('payment.succeeded', api.post(`/v1/payments/${payment.id}/succeed`));
    await write('payment.refunded', api.post(`/v1/payments/${payment.id}/refund`, { amount: 100 }));
    const failing = await write(
      'payment.created',
      api.post('/v1/payments', { student_id: student.id, amount: 5, currency: 'EUR' }),
    );
    await write('payment.failed', api.post(`/v1/payments/${failing.id}/fail`));
    const exam = await write(
      'exam.created',
      api.post('/v1/exams', { course_id: course.id, title: 'Final', max_score: 100 }),
    );
    await write('exam.updated', api.patch(`/v1/exams/${exam.id}`, { title: 'Final exam' }));
    const result = await write(
      'exam_result.created',
      api.post('/v1/exam_results', { exam_id: exam.id, student_id: student.id, score: 80 }),
    );
    await write('exam_result.published', api.post(`/v1/exam_results/${result.id}/publish`));
    await write('exam_result.updated', api.patch(`/v1/exam_results/${result.id}`, { score: 82 }));
    await write('enrollment.completed', api.post(`/v1/enrollments/${enrollment.id}/complete`));
    const spare = await write(
      'exam.created',
      api.post('/v1/exams', { course_id: course.id, title: 'Spare', max_score: 1 }),
    );
    await write('exam.deleted', api.delete(`/v1/exams/${spare.id}`));
    const other = await write(
      'student.created',
      api.post('/v1/students', { student_number: 'O-2', first_name: 'Gone', last_name: 'Soon' }),
    );
    await write('student.deleted', api.delete(`/v1/students/${other.id}`));
    const oldCourse = await write(
      'course.created',
      api.post('/v1/courses', { code: 'OLD', title: 'Old' }),
    );
    await write('course.deleted', api.delete(`/v1/courses/${oldCourse.id}`));
    const second = await write(
      'enrollment.created',
      api.post('/v1/enrollments', { student_id: student.id, course_id: course.id }),
    );
    await write('enrollment.dropped', api.post(`/v1/enrollments/${second.id}/drop`));
    const third = await write(
      'enrollment.created',
      api.post('/v1/enrollments', { student_id: student.id, course_id: course.id }),
    );
    await write('enrollment.cancelled', api.post(`/v1/enrollments/${third.id}/cancel`));

    // Requests that change nothing or fail produce nothing.
    await api.patch(`/v1/students/${student.id}`, { grade_level: 7 });
    await api.post(`/v1/enrollments/${enrollment.id}/activate`);
    await api.post('/v1/students', {
      student_number: 'O-1',
      first_name: 'Dup',
      last_name: 'Licate',
    });

    const events = await eventsOf(server, orgId);
    expect(events.map((e) => ({ type: e.type, data: e.data }))).toEqual(expected);
    for (const event of events) {
      expect(event.id).toMatch(/^evt_[0-9A-HJKMNP-TV-Z]{26}$/);
      expect(event.api_version).toBe('v1');
      // What the SDK will receive validates against the contract's catalogue.
      const parsed = EventSchema.safeParse({
        id: event.id,
        object: 'event',
        type: event.type,
        timestamp: new Date().toISOString(),
        api_version: 'v1',
        data: event.data,
      });
      expect(parsed.success).toBe(true);
    }
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
      const res = await failAfterEventWritten(() =>
        api.post('/v1/students', { student_number: 'RB-1', first_name: 'Roll', last_name: 'Back' }),
      );
      expect(res.status).toBe(500);
      expect(res.body.code).toBe('internal_error');
      expect(res.body.detail).not.toContain('injected');
      expect((await api.get('/v1/students?q=RB-1')).body.meta.total).toBe(0);
      expect(await eventsOf(server, orgId)).toEqual(before);
      // and the same request succeeds afterwards, with its one event
      expect(
        (
          await api.post('/v1/students', {
            student_number: 'RB-1',
            first_name: 'Roll',
            last_name: 'Back',
          })
        ).status,
      ).toBe(201);
      expect(await eventsOf(server, orgId)).toHaveLength(before.length + 1);
    });

    it('on a state change', async () => {
      const student = (
        await api.post('/v1/students', {
          student_number: 'RB-2',
          first_name: 'Roll',
          last_name: 'Back',
        })
      ).body;
      const payment = (
        await api.post('/v1/payments', { student_id: student.id, amount: 700, currency: 'EUR' })
      ).body;
      await api.post(`/v1/payments/${payment.id}/succeed`);
      const before = await eventsOf(server, orgId);
      const res = await failAfterEventWritten(() =>
        api.post(`/v1/payments/${payment.id}/refund`, { amount: 300 }),
      );
      expect(res.status).toBe(500);
      expect((await api.get(`/v1/payments/${payment.id}`)).body).toMatchObject({
        status: 'succeeded',
        amount_refunded: 0,
      });
      expect(await eventsOf(server, orgId)).toEqual(before);
    });

    it('on delete', async () => {
      const course = (await api.post('/v1/courses', { code: 'RB-C', title: 'Rollback' })).body;
      const before = await eventsOf(server, orgId);
      const res = await failAfterEventWritten(() => api.delete(`/v1/courses/${course.id}`));
      expect(res.status).toBe(500);
      expect((await api.get(`/v1/courses/${course.id}`)).status).toBe(200);
      expect(await eventsOf(server, orgId)).toEqual(before);
    });
  });
});
