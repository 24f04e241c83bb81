import { isUtf8 } from 'node:buffer';
import { type ErrorRequestHandler, json, type RequestHandler } from 'express';
import { ProblemException } from './problem.exception';

/**
 * The JSON body parser. A UTF-8 body must be valid UTF-8: the decoder would otherwise turn bad
 * bytes into U+FFFD, and the caller's text would be stored changed without a word.
 */
export function jsonBodyParser(limit: string): RequestHandler {
  return json({
    limit,
    type: 'application/json',
    verify: (_req, _res, body, encoding) => {
      if (encoding === 'utf-8' && !isUtf8(body)) {
        throw new ProblemException('validation_error', 'The request body is not valid UTF-8', {
          errors: [{ path: 'body', message: 'is not valid UTF-8', code: 'invalid_encoding' }],
        });
      }
    },
  });
}

/**
 * Unparseable JSON is a 400 that says so without quoting the body: the parser's own message
 * echoes the caller's bytes (`Unexpected token 'x', "xyz…" is not valid JSON`). Only V8's
 * position is kept, when the message ends with one. Mapped here because Nest would otherwise
 * wrap the parser's SyntaxError, message and all, into a BadRequestException.
 */
export const jsonParseErrorHandler: ErrorRequestHandler = (error: unknown, _req, _res, next) => {
  if ((error as { type?: unknown } | null)?.type !== 'entity.parse.failed') {
    next(error);
    return;
  }
  const message = error instanceof Error ? error.message : '';
  const position = / in JSON at position (\d+)(?: \(line \d+ column \d+\))?$/.exec(message)?.[1];
  next(
    new ProblemException(
      'validation_error',
      `The request body is not valid JSON${position ? ` (at character ${position})` : ''}`,
    ),
  );
};
