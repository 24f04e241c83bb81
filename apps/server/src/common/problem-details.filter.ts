import {
  type ArgumentsHost,
  Catch,
  type ExceptionFilter,
  HttpException,
  Logger,
} from '@nestjs/common';
import {
  contract,
  ERROR_CODES,
  ERROR_TITLES,
  type ErrorCode,
  type Problem,
  type ProblemFieldError,
  problemType,
} from '@platform/contract';
import { isAppRoute, type AppRoute, type AppRouter } from '@ts-rest/core';
import { RequestValidationError } from '@ts-rest/nest';
import type { Response } from 'express';
import type { ZodError } from 'zod';
import {
  databaseErrorCode,
  isDatabaseUnavailable,
  isStorageFull,
} from '../database/database-errors';
import { type PlatformRequest, requestOrigin } from './http-context';
import { ProblemException } from './problem.exception';

const STATUS_TO_CODE: Record<number, ErrorCode> = {
  400: 'validation_error',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  406: 'not_acceptable',
  409: 'conflict',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  429: 'rate_limited',
  503: 'service_unavailable',
};

/** `Retry-After` of a 503 while the database is unreachable (it usually is back within seconds). */
export const DATABASE_RETRY_AFTER_SECONDS = 2;
/** `Retry-After` of a 503 while the database is out of space (an operator has to free some). */
export const STORAGE_FULL_RETRY_AFTER_SECONDS = 30;

/** Every route of the contract as a matcher, to tell 405 (known path, other method) from 404. */
const ROUTE_MATCHERS = collectRoutes(contract).map((route) => ({
  method: route.method,
  pattern: new RegExp(`^${route.path.replace(/:[A-Za-z0-9_]+/g, '[^/]+')}/?$`),
}));

function collectRoutes(router: AppRouter): AppRoute[] {
  return Object.values(router).flatMap((entry) =>
    isAppRoute(entry) ? [entry] : collectRoutes(entry),
  );
}

interface BodyParserError {
  type: string;
  status?: number;
}

function isBodyParserError(error: unknown): error is BodyParserError {
  return (
    typeof error === 'object' &&
    error !== null &&
    typeof (error as { type?: unknown }).type === 'string' &&
    'status' in error
  );
}

export function zodErrors(part: string, error: ZodError | null): ProblemFieldError[] {
  if (!error) return [];
  return error.issues.flatMap((issue): ProblemFieldError[] => {
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => ({
        path: [part, ...issue.path, key].join('.'),
        message:
          part === 'query'
            ? `Unknown query parameter '${key}'`
            : `Unknown field '${[...issue.path, key].join('.')}'`,
        code: 'unknown_parameter',
      }));
    }
    const where = issue.path.join('.');
    const message =
      issue.message.startsWith(String(issue.path[0] ?? '\0')) || !where
        ? issue.message
        : `${where}: ${issue.message}`;
    return [{ path: [part, ...issue.path].join('.'), message, code: issue.code }];
  });
}

export interface ProblemAnswer {
  code: ErrorCode;
  detail: string;
  errors?: ProblemFieldError[];
  headers?: Record<string, string>;
}

/**
 * Writes RFC 9457 problem details: the filter's one renderer, also used by the front door to
 * refuse a request without raising an error through Express and Nest.
 */
export function sendProblem(req: PlatformRequest, res: Response, answer: ProblemAnswer): void {
  const { code, detail, errors, headers } = answer;
  const status = ERROR_CODES[code];
  const body: Problem = {
    type: problemType(code, requestOrigin(req)),
    title: ERROR_TITLES[code],
    status,
    detail,
    instance: (req.originalUrl ?? req.url).split('?')[0] ?? '/',
    code,
    request_id: req.id,
    ...(errors?.length && { errors }),
  };
  if (res.headersSent) return;
  req.problemCode = code;
  for (const [name, value] of Object.entries(headers ?? {})) res.setHeader(name, value);
  res.status(status).setHeader('Content-Type', 'application/problem+json; charset=utf-8');
  res.send(JSON.stringify(body));
}

/**
 * Turns every error into RFC 9457 problem details. Expected failures carry their own code;
 * anything else is a 500 whose body says nothing about the cause (logged with the request id).
 */
@Catch()
export class ProblemDetailsFilter implements ExceptionFilter {
  private readonly logger = new Logger('ProblemDetails');

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const req = http.getRequest<PlatformRequest>();
    const res = http.getResponse<Response>();
    const { code, detail, errors, headers } = this.describe(exception, req);
    const status = ERROR_CODES[code];
    if (code === 'service_unavailable' && isDatabaseUnavailable(exception)) {
      // An outage, not a bug: one line naming the cause, without the statement or its values.
      this.logger.warn(
        { error: { code: databaseErrorCode(exception) }, request_id: req.id },
        'database unavailable',
      );
    } else if (status >= 500) {
      // The kind and message only: stack traces stay out of log lines as out of responses.
      const error = exception instanceof Error ? exception : new Error(String(exception));
      this.logger.error(
        { error: { type: error.constructor.name, message: error.message }, request_id: req.id },
        'unhandled error',
      );
    }
    sendProblem(req, res, { code, detail, ...(errors && { errors }), ...(headers && { headers }) });
  }

  private describe(
    exception: unknown,
    req: PlatformRequest,
  ): {
    code: ErrorCode;
    detail: string;
    errors?: ProblemFieldError[];
    headers?: Record<string, string>;
  } {
    if (exception instanceof ProblemException) {
      return { code: exception.code, detail: exception.detail, ...exception.options };
    }
    if (isStorageFull(exception)) {
      return {
        code: 'service_unavailable',
        detail:
          'The database has no space left, so nothing of this request was saved. Retry later with the same Idempotency-Key.',
        headers: { 'Retry-After': String(STORAGE_FULL_RETRY_AFTER_SECONDS) },
      };
    }
    if (isDatabaseUnavailable(exception)) {
      return {
        code: 'service_unavailable',
        detail:
          'The database is unavailable, so this request may not have been saved. Retry shortly with the same Idempotency-Key: it then runs once, or answers as the first attempt did if that was saved after all.',
        headers: { 'Retry-After': String(DATABASE_RETRY_AFTER_SECONDS) },
      };
    }
    if (exception instanceof RequestValidationError) {
      const errors = [
        ...zodErrors('path', exception.pathParams),
        ...zodErrors('header', exception.headers),
        ...zodErrors('query', exception.query),
        ...zodErrors('body', exception.body),
      ];
      const first = errors[0]?.message ?? 'The request is invalid';
      const detail =
        errors.length > 1
          ? `${first} (and ${errors.length - 1} more problem${errors.length > 2 ? 's' : ''})`
          : first;
      return { code: 'validation_error', detail, errors };
    }
    if (isBodyParserError(exception)) {
      switch (exception.type) {
        case 'entity.too.large':
          return { code: 'payload_too_large', detail: 'The request body is too large' };
        case 'encoding.unsupported':
        case 'charset.unsupported':
          return {
            code: 'unsupported_media_type',
            detail: 'The request body must be UTF-8 encoded JSON',
          };
        default:
          break;
      }
    }
    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      if (status === 404 && /^Cannot [A-Z]+ /.test(exception.message)) {
        return this.unmatchedRoute(req);
      }
      const code = STATUS_TO_CODE[status];
      if (code) {
        const detail = exception.cause instanceof Error ? ERROR_TITLES[code] : exception.message;
        return { code, detail };
      }
    }
    return {
      code: 'internal_error',
      detail: `An unexpected error occurred. Quote the request id ${req.id} if you contact support.`,
    };
  }

  private unmatchedRoute(req: PlatformRequest): {
    code: ErrorCode;
    detail: string;
    headers?: Record<string, string>;
  } {
    const path = req.path;
    const allowed = ROUTE_MATCHERS.filter((route) => route.pattern.test(path)).map(
      (route) => route.method,
    );
    if (allowed.length > 0) {
      return {
        code: 'method_not_allowed',
        detail: `${req.method} is not allowed on ${path}; use ${allowed.join(', ')}`,
        headers: { Allow: allowed.join(', ') },
      };
    }
    return {
      code: 'not_found',
      detail: `No resource at ${req.method} ${(req.originalUrl ?? req.url).split('?')[0]}`,
    };
  }
}
