/**
 * Which requests the interceptor takes part in and what it does with each outcome of the
 * handler. The service is a stub here: its database behaviour has its own spec, and the whole
 * path runs over HTTP in test/idempotency.e2e-spec.ts.
 */
import { type CallHandler, Logger } from '@nestjs/common';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host';
import { contract } from '@platform/contract';
import type { AppRoute } from '@ts-rest/core';
import { TsRestAppRouteMetadataKey } from '@ts-rest/nest';
import { lastValueFrom, of, throwError } from 'rxjs';
import type { Principal } from '../common/principal';
import { ProblemException } from '../common/problem.exception';
import { requestFingerprint } from './fingerprint';
import { IdempotencyInterceptor } from './idempotency.interceptor';
import type { IdempotencyBegin, IdempotencyService } from './idempotency.service';

const principal = { organizationId: 'org_1' } as Principal;
const claim = { organizationId: 'org_1', key: 'k1', token: 'tok' };
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
    begin?: IdempotencyBegin;
    complete?: () => Promise<boolean>;
  } = {},
) {
  const service = {
    begin: jest.fn(() => Promise.resolve(options.begin ?? { kind: 'claimed', claim })),
    complete: jest.fn(options.complete ?? (() => Promise.resolve(true))),
    release: jest.fn(() => Promise.resolve()),
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
  const interceptor = new IdempotencyInterceptor(service as unknown as IdempotencyService);
  const run = async (next: CallHandler) =>
    lastValueFrom(await interceptor.intercept(context, next));
  return { service, res, run };
}

const answers = (value: unknown) => ({ handle: jest.fn(() => of(value)) });

describe(IdempotencyInterceptor.name, () => {
  it.each([
    ['a GET route', { route: contract.students.list, method: 'GET' }],
    ['a route outside the contract', { route: undefined }],
    ['a request without a principal', { principal: undefined }],
    ['a POST without the header', { headers: {} }],
  ])('passes %s straight through', async (_what, options) => {
    const { service, run } = setup(options);
    const next = answers({ ok: true });

    await expect(run(next)).resolves.toEqual({ ok: true });
    expect(next.handle).toHaveBeenCalled();
    expect(service.begin).not.toHaveBeenCalled();
  });

  it('refuses a key over 255 characters before claiming anything', async () => {
    const { service, run } = setup({ headers: { 'idempotency-key': 'k'.repeat(256) } });

    await expect(run(answers({}))).rejects.toBeInstanceOf(ProblemException);
    expect(service.begin).not.toHaveBeenCalled();
  });

  it('claims with the fingerprint of the normalised path and body', async () => {
    const { service, run } = setup();

    await run(answers({ id: 'stu_1' }));

    expect(service.begin).toHaveBeenCalledWith(
      'org_1',
      'k1',
      requestFingerprint('POST', '/v1/students', body),
    );
  });

  it('stores a 2xx response and sends it', async () => {
    const { service, run } = setup();

    await expect(run(answers({ id: 'stu_1' }))).resolves.toEqual({ id: 'stu_1' });
    expect(service.complete).toHaveBeenCalledWith(claim, 201, { id: 'stu_1' });
    expect(service.release).not.toHaveBeenCalled();
  });

  it('replays without running the handler', async () => {
    const { res, run } = setup({ begin: { kind: 'replay', status: 201, body: { id: 'stu_1' } } });
    const next = answers({ id: 'stu_2' });

    await expect(run(next)).resolves.toEqual({ id: 'stu_1' });
    expect(next.handle).not.toHaveBeenCalled();
    expect(res.statusCode).toBe(201);
    expect(res.headers).toEqual({ 'Idempotent-Replayed': 'true' });
  });

  it('releases the key when the handler answers non-2xx', async () => {
    const { service, res, run } = setup();
    const next = {
      handle: () => {
        res.status(409);
        return of({ code: 'conflict' });
      },
    };

    await expect(run(next)).resolves.toEqual({ code: 'conflict' });
    expect(service.release).toHaveBeenCalledWith(claim);
    expect(service.complete).not.toHaveBeenCalled();
  });

  it('releases the key and rethrows when the handler throws', async () => {
    const { service, run } = setup();
    const error = new ProblemException('validation_error', 'bad body');

    await expect(run({ handle: () => throwError(() => error) })).rejects.toBe(error);
    expect(service.release).toHaveBeenCalledWith(claim);
  });

  it('still sends a 2xx whose response could not be stored: the work is done', async () => {
    const { run } = setup({ complete: () => Promise.reject(new Error('database went away')) });
    const logged = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);

    try {
      await expect(run(answers({ id: 'stu_1' }))).resolves.toEqual({ id: 'stu_1' });
      expect(logged).toHaveBeenCalledWith(
        expect.objectContaining({ organization_id: 'org_1' }),
        'storing an idempotent response failed',
      );
    } finally {
      logged.mockRestore();
    }
  });
});
