import {
  type CallHandler,
  type ExecutionContext,
  Injectable,
  type NestInterceptor,
} from '@nestjs/common';
import type { Response } from 'express';
import { lastValueFrom, type Observable, of } from 'rxjs';
import { contractRouteOf, operationOf } from '../common/route-metadata';
import { ProblemException } from '../common/problem.exception';
import { asPlatformRequest, type PlatformRequest } from '../common/http-context';
import { requestFingerprint } from './fingerprint';
import { TransactionRunner } from '../common/transactions';
import {
  IDEMPOTENT_REPLAYED_HEADER,
  IdempotencyService,
  parseIdempotencyKey,
  type Replay,
} from './idempotency.service';

/**
 * `Idempotency-Key` on POST: the first request with a key runs and its 2xx response is kept
 * for 24 h; repeats of the same request get that response again (`Idempotent-Replayed: true`)
 * without running the handler. Only authenticated POSTs on contract routes take part; every
 * other request, and a POST without the header, passes straight through.
 *
 * A keyed request runs in one database transaction (`TransactionRunner.atomic`) holding the
 * key's claim, everything the handler writes and the stored response, so a crash at any point
 * leaves either nothing or the finished request with its response (Stripe's "atomic phase").
 *
 * Runs after the guards (so a replay still needs a valid token with the scope and counts
 * against the rate limit) and before the handler parses the request by the contract (a failure
 * rolls the claim back with the rest; common/api-handler.ts).
 */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  constructor(
    private readonly idempotency: IdempotencyService,
    private readonly transactions: TransactionRunner,
  ) {}

  intercept(
    context: ExecutionContext,
    next: CallHandler,
  ): Observable<unknown> | Promise<Observable<unknown>> {
    // Every POST passes through here (api-handler.ts): keep a POST without a key synchronous.
    if (context.getType() !== 'http') return next.handle();
    const req = asPlatformRequest(context.switchToHttp().getRequest());
    const principal = req.principal;
    if (contractRouteOf(context)?.method !== 'POST' || !principal) return next.handle();
    // An upload's handler keys itself once it has the file (ImportsService.create).
    if (operationOf(context)?.upload) return next.handle();
    const key = parseIdempotencyKey(req.headers['idempotency-key']);
    if (key === undefined) return next.handle();
    return this.keyed(context, next, req, principal.organizationId, key);
  }

  /**
   * A one-time secret is not kept for replays: the stored body has it removed, and a repeat
   * answers 409 naming the record, whose secret can be rotated or which can be revoked.
   */
  private secretReplay(field: string, body: unknown): ProblemException {
    const id = (body as { id?: unknown } | null)?.id;
    const what = typeof id === 'string' ? id : 'the record';
    return new ProblemException(
      'conflict',
      `The first request with this Idempotency-Key succeeded and created or changed ${what}, but its ${field} is shown only once and is not kept for replays. If that response was lost, rotate or revoke ${what}.`,
    );
  }

  private async keyed(
    context: ExecutionContext,
    next: CallHandler,
    req: PlatformRequest,
    organizationId: string,
    key: string,
  ): Promise<Observable<unknown>> {
    const res = context.switchToHttp().getResponse<Response>();
    const fingerprint = requestFingerprint(req.method, req.originalUrl ?? req.url, req.body);
    const secretField = operationOf(context)?.oneTimeSecret;
    // A retry of a finished request, the common case, is answered without a transaction.
    const stored = await this.idempotency.stored(organizationId, key, fingerprint);
    if (stored) return this.replay(res, stored, secretField);

    // The claim, the handler's work and the stored response commit together or not at all.
    // A failed request (validation error, 404, 409, a crash) throws: its transaction rolls back,
    // the key with it, so a corrected retry with the same key can run. The client disconnecting
    // changes nothing: the handler runs to its commit or rollback.
    const outcome = await this.transactions.atomic(async (manager) => {
      const begun = await this.idempotency.begin(manager, organizationId, key, fingerprint);
      if (begun.kind === 'replay') return begun;
      const body: unknown = await lastValueFrom(next.handle(), { defaultValue: undefined });
      // The handler has set the status it chose by the time the body comes through.
      const status = res.statusCode;
      if (status >= 200 && status < 300) {
        const kept = secretField ? withoutField(body, secretField) : body;
        await this.idempotency.complete(manager, begun.claim, status, kept);
      } else {
        await this.idempotency.release(manager, begun.claim);
      }
      return { kind: 'answered' as const, body };
    });
    if (outcome.kind === 'replay') return this.replay(res, outcome, secretField);
    return of(outcome.body);
  }

  private replay(res: Response, replay: Replay, secretField: string | undefined) {
    if (secretField) throw this.secretReplay(secretField, replay.body);
    res.status(replay.status);
    res.setHeader(IDEMPOTENT_REPLAYED_HEADER, 'true');
    return of(replay.body);
  }
}

function withoutField(body: unknown, field: string): unknown {
  if (!body || typeof body !== 'object') return body;
  const { [field]: _secret, ...rest } = body as Record<string, unknown>;
  return rest;
}
