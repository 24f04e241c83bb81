/**
 * What a client of the idempotency service sees at the edges (expiry, an empty body, a lease
 * that lapses, the purge), on the harness idempotency.service.spec uses
 * (test/support/idempotency-harness.ts).
 */
import { Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ProblemException } from '../common/problem.exception';
import { TransactionRunner } from '../common/transactions';
import { Sql } from '../database/sql';
import { Organization } from '../organizations/organization.entity';
import { IdempotencyKey } from './idempotency-key.entity';
import { IdempotencyService } from './idempotency.service';
import {
  ADMIN_URL,
  clock,
  DAY,
  effects,
  FP,
  idem,
  ORG,
  OTHER_FP,
  type Outcome,
  request,
  setUpIdempotency,
} from '../../test/support/idempotency-harness';

setUpIdempotency();

describe(`${IdempotencyService.name}: what a client sees at the edges`, () => {
  const problemOf = (outcome: Outcome) => (outcome as { problem: ProblemException }).problem;

  it('hands a claim for a new key, and for a key past 24 hours', async () => {
    const claimed = await idem.transactions.atomic((manager) =>
      idem.service.begin(manager, ORG, 'k1', FP),
    );
    const claim = {
      organizationId: ORG,
      key: 'k1',
      token: expect.stringMatching(/^[0-9a-f-]{36}$/),
    };
    expect(claimed).toEqual({ kind: 'claimed', claim });
    await idem.transactions.atomic(async (manager) => {
      if (claimed.kind === 'claimed') await idem.service.complete(manager, claimed.claim, 201, {});
    });
    idem.now += DAY + 1;
    const again = await idem.transactions.atomic((manager) =>
      idem.service.begin(manager, ORG, 'k1', FP),
    );
    expect(again).toEqual({ kind: 'claimed', claim });
  });

  it('remembers a key for exactly 24 hours', async () => {
    await request('k1');
    idem.now += DAY;
    expect(await request('k1')).toMatchObject({ kind: 'replay', status: 201 });
    expect(await request('k1', OTHER_FP)).toMatchObject({ kind: 'refused' });
    idem.now += 1;
    expect(await request('k1', OTHER_FP)).toEqual({ kind: 'ran', status: 201 });
  });

  it('replays a response without a body as one without a body', async () => {
    const begun = await idem.transactions.atomic(async (manager) => {
      const claim = await idem.service.begin(manager, ORG, 'empty', FP);
      if (claim.kind === 'claimed')
        await idem.service.complete(manager, claim.claim, 202, undefined);
      return claim;
    });
    expect(begun.kind).toBe('claimed');
    expect(await idem.service.stored(ORG, 'empty', FP)).toEqual({ kind: 'replay', status: 202 });
    expect(await idem.service.stored(ORG, 'empty', FP)).not.toHaveProperty('body', null);
  });

  // PostgreSQL reads the committed row on a connection of its own; SQLite's one connection may
  // hold another request's uncommitted transaction, so there the replay waits its turn.
  it(`replays a completed key ${ADMIN_URL ? 'without waiting for' : 'once it is its turn after'} another request in flight`, async () => {
    await request('done');
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const inFlight = request('busy', FP, { during: () => gate });
    await new Promise((resolve) => setTimeout(resolve, 20));
    const waited = new Promise((resolve) => setTimeout(() => resolve('waited'), 1000));
    const replaying = request('done');
    const first = await Promise.race([replaying, waited]);
    release();
    await inFlight;
    if (ADMIN_URL) expect(first).toMatchObject({ kind: 'replay', status: 201 });
    else expect(first).toBe('waited');
    expect(await replaying).toMatchObject({ kind: 'replay', status: 201 });
  });

  it('refuses a different request racing the first with one key, never handing it that response', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const first = request('race', FP, { during: () => gate });
    await new Promise((resolve) => setTimeout(resolve, 20));
    const other = request('race', OTHER_FP);
    await new Promise((resolve) => setTimeout(resolve, 20));
    release();

    expect(await first).toEqual({ kind: 'ran', status: 201 });
    const refused = await other;
    expect(refused).toMatchObject({ kind: 'refused' });
    expect(problemOf(refused).options.errors).toEqual([
      expect.objectContaining({ code: 'idempotency_key_reused' }),
    ]);
    expect(await effects()).toBe(1);
  });

  it('undoes the work of a request whose claim was taken from it', async () => {
    await request('k1');
    // A claim the key no longer holds (another request took it over): completing it fails the
    // transaction, and the work done under it is rolled back.
    const stale = { organizationId: ORG, key: 'k1', token: 'c0ffee00-0000-4000-8000-000000000000' };
    const outcome = await idem.transactions
      .atomic(async (manager) => {
        await manager.insert(Organization, {
          id: 'org_work_after_takeover_00000',
          name: 'work',
          plan: 'standard',
          rateLimitPerMinute: null,
          createdAt: new Date(idem.now),
          updatedAt: new Date(idem.now),
        });
        await idem.service.complete(manager, stale, 201, {});
      })
      .catch((error: unknown) => error);
    expect(outcome).toBeInstanceOf(ProblemException);
    expect(outcome).toMatchObject({
      code: 'conflict',
      options: { errors: [expect.objectContaining({ code: 'idempotency_key_in_progress' })] },
    });
    expect(await effects()).toBe(1);
  });

  it('a claim committed without an outcome blocks its key for 60 s, then is reported interrupted', async () => {
    // What a release that committed claims before the work left behind; begin() writes the lease.
    await idem.transactions.atomic((manager) => idem.service.begin(manager, ORG, 'old', FP));
    const start = idem.now;
    for (const after of [59_999, 60_000]) {
      idem.now = start + after;
      const busy = problemOf(await request('old'));
      expect(busy.options.errors).toEqual([
        expect.objectContaining({ code: 'idempotency_key_in_progress' }),
      ]);
    }
    idem.now = start + 60_001;
    const interrupted = problemOf(await request('old'));
    const message =
      'the first request with this key was interrupted and whether it took effect is unknown; check for its result before sending it again with a new key';
    expect(interrupted.detail).toBe(`Idempotency-Key 'old': ${message}`);
    expect(interrupted.options.errors).toEqual([
      { path: 'header.Idempotency-Key', message, code: 'idempotency_key_interrupted' },
    ]);
  });

  it('logs what the hourly purge removed, and a purge that failed, without throwing', async () => {
    const log = jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const setSpy = jest.spyOn(global, 'setInterval');
    try {
      await request('old');
      await request('older');
      idem.now += DAY + 1;
      idem.service.onModuleInit();
      const tick = setSpy.mock.calls[0]![0];
      tick();
      for (let i = 0; i < 100 && log.mock.calls.length === 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(log.mock.calls).toEqual([[{ purged: 2 }, 'purged expired idempotency keys']]);
      expect(log.mock.contexts[0]).toMatchObject({ context: 'Idempotency' });
      // Nothing to purge: nothing logged.
      tick();
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(log).toHaveBeenCalledTimes(1);
      idem.service.onModuleDestroy();

      // The database is gone: the purge says so and the process carries on.
      const gone = new DataSource(idem.dataSource.options);
      await gone.initialize();
      const sql = new Sql(gone);
      const broken = new IdempotencyService(
        gone.getRepository(IdempotencyKey),
        new TransactionRunner(gone, sql),
        sql,
        clock,
      );
      await gone.destroy();
      setSpy.mockClear();
      broken.onModuleInit();
      setSpy.mock.calls[0]![0]();
      // Only the service's own lines: the transaction runner warns too, in its words.
      const own = () =>
        warn.mock.calls.filter((_, i) => warn.mock.contexts[i]?.context === 'Idempotency');
      for (let i = 0; i < 100 && own().length === 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      broken.onModuleDestroy();
      expect(own()).toEqual([
        [
          { err: expect.any(Error) },
          'purging expired idempotency keys failed; retrying in an hour',
        ],
      ]);
    } finally {
      log.mockRestore();
      warn.mockRestore();
      setSpy.mockRestore();
    }
  });
});
