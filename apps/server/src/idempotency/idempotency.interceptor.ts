import {
  type CallHandler,
  type ExecutionContext,
  Injectable,
  Logger,
  type NestInterceptor,
} from '@nestjs/common';
import type { Response } from 'express';
import { catchError, from, mergeMap, type Observable, of, throwError } from 'rxjs';
import { contractRouteOf, operationOf } from '../common/route-metadata';
import { ProblemException } from '../common/problem.exception';
import { asPlatformRequest, type PlatformRequest } from '../common/http-context';
import { requestFingerprint } from './fingerprint';
import {
  type IdempotencyClaim,
  IDEMPOTENT_REPLAYED_HEADER,
  IdempotencyService,
  parseIdempotencyKey,
} from './idempotency.service';

/**
 * `Idempotency-Key` on POST: the first request with a key runs and its 2xx response is kept
 * for 24 h; repeats of the same request get that response again (`Idempotent-Replayed: true`)
 * without running the handler. Only authenticated POSTs on contract routes take part; every
 * other request, and a POST without the header, passes straight through.
 *
 * Runs after the guards (so a replay still needs a valid token with the scope and counts
 * against the rate limit) and before ts-rest's request validation (so a request that fails
 * validation has claimed its key and releases it again, see below).
 */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  private readonly logger = new Logger('Idempotency');

  constructor(private readonly idempotency: IdempotencyService) {}

  intercept(
    context: ExecutionContext,
    next: CallHandler,
  ): Observable<unknown> | Promise<Observable<unknown>> {
    // Every request passes through here: keep the common case (not a keyed POST) synchronous.
    if (context.getType() !== 'http') return next.handle();
    const req = asPlatformRequest(context.switchToHttp().getRequest());
    const principal = req.principal;
    if (contractRouteOf(context)?.method !== 'POST' || !principal) return next.handle();
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
    const outcome = await this.idempotency.begin(organizationId, key, fingerprint);
    const secretField = operationOf(context)?.oneTimeSecret;
    if (outcome.kind === 'replay' && secretField)
      throw this.secretReplay(secretField, outcome.body);
    if (outcome.kind === 'replay') {
      res.status(outcome.status);
      res.setHeader(IDEMPOTENT_REPLAYED_HEADER, 'true');
      return of(outcome.body);
    }

    const { claim } = outcome;
    // Nothing is released when the client disconnects mid-request: the handler keeps running
    // and may still commit, so the claim stays until it completes or its lease runs out.
    return next.handle().pipe(
      mergeMap(async (body: unknown) => {
        // ts-rest has set the status the handler chose by the time the body comes through.
        const status = res.statusCode;
        if (status >= 200 && status < 300) {
          await this.store(claim, status, secretField ? withoutField(body, secretField) : body);
        } else await this.releaseQuietly(claim);
        return body;
      }),
      // A failed request (validation error, 404, 409, a crash) did not do its work, or rolled
      // it back: free the key so that a corrected retry with the same key can run.
      catchError((error: unknown) =>
        from(this.releaseQuietly(claim)).pipe(mergeMap(() => throwError(() => error))),
      ),
    );
  }

  /**
   * The work is done and committed at this point, so this client gets its 2xx even if the
   * response cannot be stored; a repeat within the lease is then refused (409) rather than
   * running the work twice.
   */
  private async store(claim: IdempotencyClaim, status: number, body: unknown): Promise<void> {
    try {
      const stored = await this.idempotency.complete(claim, status, body);
      if (!stored) {
        this.logger.warn(
          { organization_id: claim.organizationId },
          'idempotency key was taken over before the request finished; its response is not stored',
        );
      }
    } catch (err) {
      this.logger.error(
        { err, organization_id: claim.organizationId },
        'storing an idempotent response failed',
      );
    }
  }

  /** A key that cannot be released stays claimed until its lease runs out (60 s), no longer. */
  private async releaseQuietly(claim: IdempotencyClaim): Promise<void> {
    try {
      await this.idempotency.release(claim);
    } catch (err) {
      this.logger.error(
        { err, organization_id: claim.organizationId },
        'releasing an idempotency key failed',
      );
    }
  }
}

function withoutField(body: unknown, field: string): unknown {
  if (!body || typeof body !== 'object') return body;
  const { [field]: _secret, ...rest } = body as Record<string, unknown>;
  return rest;
}
