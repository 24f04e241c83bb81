/**
 * Which requests the interceptor takes part in and what it does with each outcome of the
 * handler. The service and the transaction runner are stubs here: their database behaviour has
 * its own spec, and the whole path runs over HTTP in test/idempotency.e2e-spec.ts.
 */
import type { CallHandler } from '@nestjs/common';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host';
import { contract } from '@platform/contract';
import type { AppRoute } from '@ts-rest/core';
import { TsRestAppRouteMetadataKey } from '@ts-rest/nest';
import { lastValueFrom, of, throwError } from 'rxjs';
import type { EntityManager } from 'typeorm';
import type { Principal } from '../common/principal';
import type { TransactionRunner } from '../common/transactions';
import { ProblemException } from '../common/problem.exception';
import { requestFingerprint } from './fingerprint';
import { IdempotencyInterceptor } from './idempotency.interceptor';
import type { IdempotencyBegin, IdempotencyService, Replay } from './idempotency.service';

const principal = { organizationId: 'org_1' } as Principal;
const claim = { organizationId: 'org_1', key: 'k1', token: 'tok' };
/** The request transaction's manager, as the stub runner hands it to the work. */
const manager = { name: 'the request transaction' } as unknown as EntityManager;
const body = { student_number: 'S-1', first_name: 'Ada', last_name: 'Lovelace' };

function handlerFor(route: AppRoute | undefined): () => void {
  const handler = () => undefined;
  if (route) Reflect.defineMetadata(TsRestAppRouteMetadataKey, { appRoute: route }, handler);
  return handler;
}

function setup(
  options: {
    route?: AppRoute | undefined;
    method?: string;
    headers?: Record<string, string>;
    principal?: Principal | undefined;
    stored?: Replay;
    begin?: IdempotencyBegin;
  } = {},
) {
  const service = {
    stored: jest.fn(() => Promise.resolve(options.stored)),
    begin: jest.fn(() => Promise.resolve(options.begin ?? { kind: 'claimed', claim })),
    complete: jest.fn(() => Promise.resolve()),
    release: jest.fn(() => Promise.resolve()),
  };
  const transactions = {
    atomic: jest.fn((work: (m: EntityManager) => Promise<unknown>) => work(manager)),
  };
  const req = {
    method: options.method ?? 'POST',
    originalUrl: '/api/v1/students',
    url: '/v1/students',
    headers: options.headers ?? { 'idempotency-key': 'k1' },
    body,
    principal: 'principal' in options ? options.principal : principal,
  };
  const res = {
    statusCode: 201,
    headers: {} as Record<string, string>,
    status(code: number) {
      this.statusCode = code;
      return this;
    },
    setHeader(name: string, value: string) {
      this.headers[name] = value;
    },
  };
  const route = 'route' in options ? options.route : contract.students.create;
  const context = new ExecutionContextHost([req, res], undefined, handlerFor(route));
  const interceptor = new IdempotencyInterceptor(
    service as unknown as IdempotencyService,
    transactions as unknown as TransactionRunner,
  );
  const run = async (next: CallHandler) =>
    lastValueFrom(await interceptor.intercept(context, next));
  return { service, transactions, res, run };
}

const answers = (value: unknown) => ({ handle: jest.fn(() => of(value)) });

describe(IdempotencyInterceptor.name, () => {
  it.each([
    ['a GET route', { route: contract.students.list, method: 'GET' }],
    ['a route outside the contract', { route: undefined }],
    ['a request without a principal', { principal: undefined }],
    ['a POST without the header', { headers: {} }],
  ])('passes %s straight through, outside any transaction', async (_what, options) => {
    const { service, transactions, run } = setup(options);
    const next = answers({ ok: true });

    await expect(run(next)).resolves.toEqual({ ok: true });
    expect(next.handle).toHaveBeenCalled();
    expect(service.begin).not.toHaveBeenCalled();
    expect(transactions.atomic).not.toHaveBeenCalled();
  });

  it('refuses a key over 255 characters before claiming anything', async () => {
    const { service, run } = setup({ headers: { 'idempotency-key': 'k'.repeat(256) } });

    await expect(run(answers({}))).rejects.toBeInstanceOf(ProblemException);
    expect(service.begin).not.toHaveBeenCalled();
  });

  it('claims in the request transaction with the fingerprint of the normalised path and body', async () => {
    const { service, run } = setup();

    await run(answers({ id: 'stu_1' }));

    expect(service.begin).toHaveBeenCalledWith(
      manager,
      'org_1',
      'k1',
      requestFingerprint('POST', '/v1/students', body),
    );
  });

  it('stores a 2xx response in the same transaction and sends it', async () => {
    const { service, run } = setup();

    await expect(run(answers({ id: 'stu_1' }))).resolves.toEqual({ id: 'stu_1' });
    expect(service.complete).toHaveBeenCalledWith(manager, claim, 201, { id: 'stu_1' });
    expect(service.release).not.toHaveBeenCalled();
  });

  it('replays a stored response without a transaction and without running the handler', async () => {
    const { res, transactions, run } = setup({
      stored: { kind: 'replay', status: 201, body: { id: 'stu_1' } },
    });
    const next = answers({ id: 'stu_2' });

    await expect(run(next)).resolves.toEqual({ id: 'stu_1' });
    expect(next.handle).not.toHaveBeenCalled();
    expect(transactions.atomic).not.toHaveBeenCalled();
    expect(res.statusCode).toBe(201);
    expect(res.headers).toEqual({ 'Idempotent-Replayed': 'true' });
  });

  it('releases the key in the transaction when the handler answers non-2xx', async () => {
    const { service, res, run } = setup();
    const next = {
      handle: () => {
        res.status(409);
        return of({ code: 'conflict' });
      },
    };

    await expect(run(next)).resolves.toEqual({ code: 'conflict' });
    expect(service.release).toHaveBeenCalledWith(manager, claim);
    expect(service.complete).not.toHaveBeenCalled();
  });

  it('rethrows what the handler throws, storing nothing (the transaction rolls back)', async () => {
    const { service, run } = setup();
    const error = new ProblemException('validation_error', 'bad body');

    await expect(run({ handle: () => throwError(() => error) })).rejects.toBe(error);
    expect(service.complete).not.toHaveBeenCalled();
  });

  it('answers 409 naming the record instead of replaying a one-time secret', async () => {
    const { run } = setup({
      route: contract.personalAccessTokens.create,
      stored: { kind: 'replay', status: 201, body: { id: 'pat_1', name: 'ci' } },
    });

    const error = (await run(answers({})).catch((e: unknown) => e)) as ProblemException;

    expect(error).toBeInstanceOf(ProblemException);
    expect(error.code).toBe('conflict');
    expect(error.detail).toMatch(/created or changed pat_1, but its token is shown only once/);
  });
});
