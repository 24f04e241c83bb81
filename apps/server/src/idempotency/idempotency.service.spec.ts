/**
 * The claim/replay/release protocol against a real database: a fresh SQLite file, or a fresh
 * PostgreSQL database when TEST_DATABASE_URL is set (as CI does), with just the tables it needs.
 * Each request runs as the interceptor runs it: claim, work and stored response in one
 * `TransactionRunner.atomic` transaction. Durations are written out (24 h, 60 s, 1 h), not
 * imported from the code under test, so a wrong constant there fails here.
 */
import { ProblemException } from '../common/problem.exception';
import { IdempotencyKey } from './idempotency-key.entity';
import { IdempotencyService, parseIdempotencyKey } from './idempotency.service';
import {
  DAY,
  effects,
  FP,
  idem,
  keyRow,
  ORG,
  OTHER_FP,
  OTHER_ORG,
  request,
  setUpIdempotency,
} from '../../test/support/idempotency-harness';

setUpIdempotency();

describe(parseIdempotencyKey.name, () => {
  it('returns undefined without the header and the key as sent otherwise', () => {
    expect(parseIdempotencyKey(undefined)).toBeUndefined();
    expect(parseIdempotencyKey('k'.repeat(255))).toBe('k'.repeat(255));
    // A hand-made request may repeat the header; Node would have joined it so.
    expect(parseIdempotencyKey(['a', 'b'])).toBe('a, b');
  });

  it.each([
    ['empty', '', 'must not be empty', 'too_small'],
    ['blank', '   ', 'must not be empty', 'too_small'],
    ['longer than 255 characters', 'k'.repeat(256), 'must be at most 255 characters', 'too_big'],
  ])('refuses a key that is %s with a 400 naming the header', (_what, key, message, code) => {
    let error: unknown;
    try {
      parseIdempotencyKey(key);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ProblemException);
    expect(error).toMatchObject({
      code: 'validation_error',
      detail: `Idempotency-Key: ${message}`,
      options: { errors: [{ path: 'header.Idempotency-Key', message, code }] },
    });
  });
});

describe(IdempotencyService.name, () => {
  it('runs a new key once and replays its stored response, status and body', async () => {
    const first = await request('k1');
    expect(first).toEqual({ kind: 'ran', status: 201 });
    const row = await keyRow('k1');

    const again = await request('k1');

    expect(again).toEqual({ kind: 'replay', status: 201, body: JSON.parse(row!.responseBody!) });
    expect(row).toMatchObject({ state: 'completed', responseStatus: 201, lockToken: null });
    expect(await effects()).toBe(1);
  });

  it('keeps nothing of a request whose transaction fails after its work: the retry runs it', async () => {
    // A crash between the work and the commit is the same to the database: nothing committed.
    await expect(request('k1', FP, { fail: new Error('process died') })).rejects.toThrow(
      'process died',
    );
    expect(await keyRow('k1')).toBeNull();
    expect(await effects()).toBe(0);

    expect(await request('k1')).toEqual({ kind: 'ran', status: 201 });
    expect(await request('k1')).toMatchObject({ kind: 'replay' });
    expect(await effects()).toBe(1);
  });

  it('never replays a stored response before its transaction commits (it may roll back)', async () => {
    let rollBack!: () => void;
    const gate = new Promise<void>((resolve) => (rollBack = resolve));
    let stored!: () => void;
    const responseStored = new Promise<void>((resolve) => (stored = resolve));
    const first = request('k1', FP, {
      beforeCommit: () => {
        stored();
        return gate;
      },
      fail: new Error('rolled back after storing the response'),
    });
    await responseStored;

    // A retry arriving now must not be answered from the uncommitted row.
    const early = idem.service.stored(ORG, 'k1', FP);
    rollBack();
    await expect(first).rejects.toThrow('rolled back after storing the response');
    expect(await early).toBeUndefined();
    expect(await keyRow('k1')).toBeNull();
    expect(await request('k1')).toEqual({ kind: 'ran', status: 201 });
  });

  it('frees the key of a request that answered non-2xx, for any request', async () => {
    expect(await request('k1', FP, { status: 409 })).toEqual({ kind: 'ran', status: 409 });
    expect(await keyRow('k1')).toBeNull();

    expect(await request('k1', OTHER_FP)).toEqual({ kind: 'ran', status: 201 });
  });

  it('answers 409 for the same key with a different request', async () => {
    await request('k1');

    const other = await request('k1', OTHER_FP);

    expect(other).toMatchObject({ kind: 'refused' });
    const { problem } = other as { problem: ProblemException };
    expect(problem.code).toBe('conflict');
    expect(problem.detail).toBe(
      "Idempotency-Key 'k1' was already used with a different request (another path or body) in the last 24 hours; send a new key for a new request",
    );
    expect(problem.options.errors).toEqual([
      expect.objectContaining({ path: 'header.Idempotency-Key', code: 'idempotency_key_reused' }),
    ]);
  });

  it('keeps keys apart per organization', async () => {
    await request('k1');

    expect(await request('k1', OTHER_FP, { org: OTHER_ORG })).toEqual({ kind: 'ran', status: 201 });
    expect(await effects()).toBe(2);
  });

  it('treats a key older than 24 hours as new, whatever it was used for', async () => {
    await request('k1');

    idem.now += DAY - 1;
    expect(await request('k1')).toMatchObject({ kind: 'replay' });
    expect(await request('k1', OTHER_FP)).toMatchObject({ kind: 'refused' });

    idem.now += 2;
    expect(await request('k1', OTHER_FP)).toEqual({ kind: 'ran', status: 201 });
    expect(await request('k1', OTHER_FP)).toMatchObject({ kind: 'replay' });
  });

  it('runs one of ten concurrent requests with one key; the others replay it', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const first = request('race', FP, { during: () => gate });
    const rest = Array.from({ length: 9 }, () => request('race'));
    await new Promise((resolve) => setTimeout(resolve, 50));
    release();

    const outcomes = await Promise.all([first, ...rest]);

    expect(outcomes.filter((o) => o.kind === 'ran')).toHaveLength(1);
    expect(outcomes.filter((o) => o.kind === 'replay')).toHaveLength(9);
    expect(await effects()).toBe(1);
  });

  /** A key a release that committed claims on their own left in progress. */
  async function legacyClaim(lockedFor: number) {
    await idem.dataSource.getRepository(IdempotencyKey).insert({
      organizationId: ORG,
      key: 'old',
      fingerprint: FP,
      state: 'in_progress',
      lockToken: 'b7f1d6a4-0000-4000-8000-000000000000',
      lockedUntil: new Date(idem.now + lockedFor),
      responseStatus: null,
      responseBody: null,
      createdAt: new Date(idem.now),
      completedAt: null,
    });
  }

  it('answers 409 with Retry-After: 1 for a committed claim whose lease is running', async () => {
    await legacyClaim(60_000);
    idem.now += 59_999;

    const busy = await request('old');

    expect(busy).toMatchObject({ kind: 'refused' });
    const { problem } = busy as { problem: ProblemException };
    expect(problem.detail).toBe(
      "Idempotency-Key 'old': the first request with this key is still being processed; retry shortly",
    );
    expect(problem.options.headers).toEqual({ 'Retry-After': '1' });
    expect(await effects()).toBe(0);
  });

  it('never runs a committed claim again once its lease ran out: its outcome is unknown', async () => {
    await legacyClaim(60_000);
    idem.now += 60_001;

    const outcome = await request('old');

    expect(outcome).toMatchObject({ kind: 'refused' });
    const { problem } = outcome as { problem: ProblemException };
    expect(problem.code).toBe('conflict');
    expect(problem.options.errors).toEqual([
      expect.objectContaining({ code: 'idempotency_key_interrupted' }),
    ]);
    expect(problem.options.headers).toBeUndefined();
    expect(await request('old', OTHER_FP)).toMatchObject({ kind: 'refused' });
    expect(await effects()).toBe(0);
  });

  it('purges keys older than 24 hours and keeps the rest', async () => {
    await request('old');
    idem.now += DAY / 2;
    await request('young');
    idem.now += DAY / 2 + 1;

    expect(await idem.service.purgeExpired()).toBe(1);
    const left = await idem.dataSource.getRepository(IdempotencyKey).find();
    expect(left.map((k) => k.key)).toEqual(['young']);
  });

  it('purges every hour on an unref’d timer that stops with the module', async () => {
    const setSpy = jest.spyOn(global, 'setInterval');
    const clearSpy = jest.spyOn(global, 'clearInterval');
    try {
      await request('old');
      idem.now += DAY + 1;
      idem.service.onModuleInit();
      const [tick, interval] = setSpy.mock.calls[0]!;
      const timer = setSpy.mock.results[0]!.value as NodeJS.Timeout;
      expect(interval).toBe(3_600_000);
      expect(timer.hasRef()).toBe(false);

      tick();
      for (let i = 0; i < 100 && (await keyRow('old')); i++) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(await keyRow('old')).toBeNull();

      idem.service.onModuleDestroy();
      expect(clearSpy).toHaveBeenCalledWith(timer);
    } finally {
      setSpy.mockRestore();
      clearSpy.mockRestore();
    }
  });
});
