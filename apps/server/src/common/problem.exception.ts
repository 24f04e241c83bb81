import { ERROR_CODES, type ErrorCode, type ProblemFieldError } from '@platform/contract';

/**
 * The one exception type services throw for expected failures. The problem-details filter
 * turns it into an RFC 9457 response; `headers` travel with it (WWW-Authenticate, Retry-After).
 */
export class ProblemException extends Error {
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    readonly detail: string,
    readonly options: { errors?: ProblemFieldError[]; headers?: Record<string, string> } = {},
  ) {
    super(detail);
    this.status = ERROR_CODES[code];
  }
}
