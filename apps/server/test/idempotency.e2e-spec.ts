import { randomUUID } from 'node:crypto';
import { requestFingerprint } from '../src/idempotency/fingerprint';
import { IdempotencyKey } from '../src/idempotency/idempotency-key.entity';
import { IDEMPOTENCY_KEY_TTL_MS } from '../src/idempotency/idempotency.service';
import { ManualClock } from '../src/testing';
import { type BodyOf, expectStatus, typedClient, type TypedClient } from './support/api';
import { rawCall, startServer, type TestServer } from './support/server';

type NewStudent = BodyOf<TypedClient['students']['create']>;

/**
 * `Idempotency-Key` on POST, over HTTP, with `POST /v1/students` as the write: the same key
 * and body replay the first response, a different body is a 409, and a failed attempt leaves
 * the key free for a corrected retry.
 */
describe('Idempotency-Key on POST', () => {
  let server: TestServer;
  let orgId: string;
  let token: string;
  let otherOrgToken: string;
  /** The server's clock: moved forward (last test) to expire a key without waiting 24 h. */
  const clock = new ManualClock();

  beforeAll(async () => {
    server = await startServer({}, { clock });
    orgId = (await server.createOrganization()).id;
    ({ token } = await server.createToken(orgId, ['students:read', 'students:write']));
    const otherOrg = await server.createOrganization({ name: 'Other School' });
    ({ token: otherOrgToken } = await server.createToken(otherOrg.id, [
      'students:read',
      'students:write',
    ]));
  });
  afterAll(() => server.close());

  let seq = 0;
  /** A valid new-student body with a student number no other test uses. */
  const newStudent = (overrides: Partial<NewStudent> = {}): NewStudent => ({
    student_number: `IDEM-${++seq}`,
    first_name: 'Ada',
    last_name: 'Lovelace',
    ...overrides,
  });

  /** `POST /v1/students`, with `Idempotency-Key: key` when given. */
  function post(body: NewStudent, options: { key?: string; token?: string } = {}) {
    return typedClient(server, options.token ?? token).students.create({
      body,
      ...(options.key !== undefined && { extraHeaders: { 'Idempotency-Key': options.key } }),
    });
  }

  /** How many students of the caller's organization have this student number. */
  async function countByNumber(studentNumber: string, t = token): Promise<number> {
    const res = await typedClient(server, t).students.list({ query: { q: studentNumber } });
    return expectStatus(res, 200).body.data.filter((s) => s.student_number === studentNumber)
      .length;
  }

  it('replays the first response (same status and body, Idempotent-Replayed: true) without creating twice', async () => {
    const key = randomUUID();
    const body = newStudent();

    const first = await post(body, { key });
    const second = await post(body, { key });

    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect(second.status).toBe(201);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(second.headers.get('content-type')).toMatch(/^application\/json/);
    expect(second.body).toEqual(first.body);
    expect(await countByNumber(body.student_number)).toBe(1);
  });

  it('treats /api/v1 and /v1, and a body with its keys in another order, as the same request', async () => {
    const key = randomUUID();
    const body = newStudent();
    const first = await post(body, { key });

    const reordered = JSON.stringify({
      last_name: body.last_name,
      first_name: body.first_name,
      student_number: body.student_number,
    });
    // The /api alias and a hand-ordered body are beyond the typed client: sent raw.
    const again = await rawCall(server, '/api/v1/students', {
      method: 'POST',
      token,
      headers: { 'Content-Type': 'application/json', 'Idempotency-Key': key },
      body: reordered,
    });

    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
  });

  it('answers 409 conflict when the key is reused with a different body', async () => {
    const key = randomUUID();
    const body = newStudent();
    expect((await post(body, { key })).status).toBe(201);

    const other = newStudent();
    const res = expectStatus(await post(other, { key }), 409);

    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(res.body).toMatchObject({
      code: 'conflict',
      detail: expect.stringMatching(
        /^Idempotency-Key '.+' was already used with a different request/,
      ),
      errors: [{ path: 'header.Idempotency-Key', code: 'idempotency_key_reused' }],
    });
    expect(await countByNumber(other.student_number)).toBe(0);
  });

  it('keeps keys apart per organization', async () => {
    const key = randomUUID();
    const body = newStudent();

    const ours = expectStatus(await post(body, { key }), 201);
    const theirs = expectStatus(await post(body, { key, token: otherOrgToken }), 201);

    expect(theirs.headers.get('idempotent-replayed')).toBeNull();
    expect(theirs.body.id).not.toBe(ours.body.id);
    expect(await countByNumber(body.student_number, otherOrgToken)).toBe(1);
  });

  it('changes nothing for a POST without the header', async () => {
    const a = await post(newStudent());
    const b = await post(newStudent());

    expect([a.status, b.status]).toEqual([201, 201]);
    expect(a.headers.get('idempotent-replayed')).toBeNull();
    expect(expectStatus(b, 201).body.id).not.toBe(expectStatus(a, 201).body.id);
  });

  it('ignores the header on a GET', async () => {
    const res = await typedClient(server, token).students.list({
      query: { per_page: 1 },
      extraHeaders: { 'Idempotency-Key': 'k'.repeat(300) },
    });

    expect(res.status).toBe(200);
    expect(res.headers.get('idempotent-replayed')).toBeNull();
  });

  it('does the work once for five concurrent requests with one key', async () => {
    const key = randomUUID();
    const body = newStudent();

    const responses = await Promise.all(Array.from({ length: 5 }, () => post(body, { key })));

    const original = responses.filter(
      (r) => r.status === 201 && r.headers.get('idempotent-replayed') === null,
    );
    expect(original).toHaveLength(1);
    for (const res of responses) {
      if (res.status === 201) {
        // The original, or a replay of it.
        expect(res.body).toEqual(original[0]!.body);
      } else {
        // Refused by the key (the first request was still running), not by the uniqueness
        // of student_number: the handler never ran for it.
        expect(expectStatus(res, 409).body.errors).toEqual([
          expect.objectContaining({
            path: 'header.Idempotency-Key',
            code: 'idempotency_key_in_progress',
          }),
        ]);
        expect(res.headers.get('retry-after')).toBe('1');
      }
    }
    expect(await countByNumber(body.student_number)).toBe(1);

    // Once the first request has finished, every retry gets its response.
    const later = await post(body, { key });
    expect(later.status).toBe(201);
    expect(later.headers.get('idempotent-replayed')).toBe('true');
    expect(later.body).toEqual(original[0]!.body);
  });

  it('answers 409 while an earlier release still runs the first request, and never runs it again after', async () => {
    const key = randomUUID();
    const body = newStudent();
    // The first request, claimed by an instance of a release that committed claims on their own
    // (before the work), and that is still working on it.
    const keys = server.dataSource.getRepository(IdempotencyKey);
    await keys.insert({
      organizationId: orgId,
      key,
      fingerprint: requestFingerprint('POST', '/v1/students', body),
      state: 'in_progress',
      lockToken: randomUUID(),
      lockedUntil: new Date(clock.nowMs() + 30_000),
      responseStatus: null,
      responseBody: null,
      createdAt: clock.now(),
      completedAt: null,
    });

    const busy = expectStatus(await post(body, { key }), 409);
    expect(busy.headers.get('retry-after')).toBe('1');
    expect(busy.body).toMatchObject({
      code: 'conflict',
      errors: [{ path: 'header.Idempotency-Key', code: 'idempotency_key_in_progress' }],
    });

    // That instance died: whether its work committed is unknown, so the key never runs again.
    await keys.update({ organizationId: orgId, key }, { lockedUntil: new Date(clock.nowMs() - 1) });
    const retry = expectStatus(await post(body, { key }), 409);
    expect(retry.headers.get('retry-after')).toBeNull();
    expect(retry.body).toMatchObject({
      code: 'conflict',
      errors: [{ path: 'header.Idempotency-Key', code: 'idempotency_key_interrupted' }],
    });
    expect(await countByNumber(body.student_number)).toBe(0);
  });

  // Issue 30, defect 2: claim, work and completion were three transactions, so a key left
  // in progress after its work committed was run again by the next retry (two payments).
  it('keeps the stored response with the work it records: a retry replays, never pays twice', async () => {
    const { token: payer } = await server.createToken(orgId, [
      'students:write',
      'payments:read',
      'payments:write',
    ]);
    const student = expectStatus(
      await post(newStudent(), { token: payer, key: randomUUID() }),
      201,
    ).body;
    const key = randomUUID();
    const pay = () =>
      typedClient(server, payer).payments.create({
        body: { student_id: student.id, amount: 12_500, currency: 'EUR', description: 'Fees' },
        extraHeaders: { 'Idempotency-Key': key },
      });
    const first = expectStatus(await pay(), 201);
    const row = await server.dataSource
      .getRepository(IdempotencyKey)
      .findOneByOrFail({ organizationId: orgId, key });
    expect(row.state).toBe('completed');
    expect(JSON.parse(row.responseBody!)).toMatchObject({ id: first.body.id });

    const again = expectStatus(await pay(), 201);

    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    // The recipe: the key set back to "in progress" with its lease run out, as a crash
    // between the payment's commit and the key's completion used to leave it.
    await server.dataSource
      .getRepository(IdempotencyKey)
      .update(
        { organizationId: orgId, key },
        { state: 'in_progress', lockedUntil: new Date(clock.nowMs() - 1), responseStatus: null },
      );
    const afterCrash = expectStatus(await pay(), 409);
    expect(afterCrash.body.errors?.[0]?.code).toBe('idempotency_key_interrupted');

    const payments = expectStatus(
      await typedClient(server, payer).payments.list({ query: { student_id: student.id } }),
      200,
    ).body.data;
    expect(payments.map((p) => p.id)).toEqual([first.body.id]);
  });

  // The first attempt failed, did nothing, and released the key, so the corrected request
  // (necessarily a different body) runs under the same key instead of getting a 409.
  it('lets a corrected retry use the key of an attempt that failed validation', async () => {
    const key = randomUUID();
    const body = newStudent();

    const invalid = await post({ ...body, last_name: '' }, { key });
    expect(expectStatus(invalid, 400).body.code).toBe('validation_error');

    const corrected = await post(body, { key });
    expect(corrected.status).toBe(201);
    expect(corrected.headers.get('idempotent-replayed')).toBeNull();

    const replay = await post(body, { key });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(corrected.body);
  });

  it('does not store a 409 from the handler either', async () => {
    const taken = newStudent();
    expect((await post(taken)).status).toBe(201);
    const key = randomUUID();

    const clash = await post({ ...newStudent(), student_number: taken.student_number }, { key });
    expect(expectStatus(clash, 409).body.errors?.[0]?.path).toBe('body.student_number');

    const fixed = newStudent();
    const res = expectStatus(await post(fixed, { key }), 201);
    expect(res.body.student_number).toBe(fixed.student_number);
  });

  it.each([
    ['longer than 255 characters', 'k'.repeat(256), 'must be at most 255 characters'],
    ['empty', '', 'must not be empty'],
  ])('refuses a key that is %s with 400 naming the header', async (_what, key, message) => {
    const body = newStudent();

    const res = expectStatus(await post(body, { key }), 400);

    expect(res.body).toMatchObject({
      code: 'validation_error',
      errors: [{ path: 'header.Idempotency-Key', message }],
    });
    expect(await countByNumber(body.student_number)).toBe(0);
  });

  it('accepts a key of exactly 255 characters', async () => {
    const key = 'k'.repeat(250) + randomUUID().slice(0, 5);

    expect((await post(newStudent(), { key })).status).toBe(201);
  });

  it('still needs a valid token and the write scope to get a replay', async () => {
    const key = randomUUID();
    const body = newStudent();
    expect((await post(body, { key })).status).toBe(201);

    const anonymous = await typedClient(server).students.create({
      body,
      extraHeaders: { 'Idempotency-Key': key },
    });
    expect(anonymous.status).toBe(401);
  });

  // Last: it moves the server's clock a day forward, which would end the leases of later tests.
  it('forgets a key after 24 h: the same key then runs a different request instead of a 409', async () => {
    const key = randomUUID();
    const first = expectStatus(await post(newStudent(), { key }), 201);
    const other = newStudent();
    expect((await post(other, { key })).status).toBe(409);

    clock.advance(IDEMPOTENCY_KEY_TTL_MS + 1000);
    const res = expectStatus(await post(other, { key }), 201);
    expect(res.headers.get('idempotent-replayed')).toBeNull();
    expect(res.body.id).not.toBe(first.body.id);
    expect(await countByNumber(other.student_number)).toBe(1);
  });
});
