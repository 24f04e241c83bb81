import type { NextFunction, Request, Response } from 'express';
import { ProblemException } from './problem.exception';

/**
 * Refuses JSON nested deeper than MAX_BODY_DEPTH, and the NUL character (U+0000) anywhere in a request's path, query or JSON body with a
 * 400 naming where it is. PostgreSQL cannot store it in text (it failed the query: a 500 that
 * the contract fuzzer found), and no field of this API has a use for it, on either database.
 */
export function nulGuardMiddleware(req: Request, _res: Response, next: NextFunction): void {
  if (/%00/i.test(req.url)) {
    next(
      nulIn(
        req.url.includes('?') && req.url.indexOf('%00') > req.url.indexOf('?') ? 'query' : 'path',
      ),
    );
    return;
  }
  const problem = findProblem(req.body as unknown);
  if (!problem) {
    next();
    return;
  }
  next(problem.kind === 'nul' ? nulIn(problem.path) : tooDeep(problem.path));
}

function tooDeep(path: string): ProblemException {
  const message = `must not nest objects and arrays more than ${MAX_BODY_DEPTH} levels deep`;
  return new ProblemException('validation_error', `body: ${message}`, {
    errors: [{ path, message, code: 'too_deep' }],
  });
}

function nulIn(path: string): ProblemException {
  const message = 'must not contain the NUL character (U+0000)';
  return new ProblemException('validation_error', `${path}: ${message}`, {
    errors: [{ path, message, code: 'invalid_string' }],
  });
}

/** No request body of this API nests deeper; deeper JSON is refused before anything walks it. */
export const MAX_BODY_DEPTH = 32;

/**
 * The path of the first string (or key) holding a NUL, or of a value nested deeper than
 * MAX_BODY_DEPTH; undefined if none. Iterative, so hostile nesting cannot exhaust the stack.
 */
function findProblem(body: unknown): { path: string; kind: 'nul' | 'depth' } | undefined {
  const stack: { value: unknown; path: string; depth: number }[] = [
    { value: body, path: 'body', depth: 0 },
  ];
  while (stack.length > 0) {
    const { value, path, depth } = stack.pop()!;
    if (typeof value === 'string') {
      if (value.includes('\u0000')) return { path, kind: 'nul' };
      continue;
    }
    if (!value || typeof value !== 'object') continue;
    if (depth >= MAX_BODY_DEPTH) return { path, kind: 'depth' };
    const entries: [string, unknown][] = Array.isArray(value)
      ? (value as unknown[]).map((child, i): [string, unknown] => [String(i), child])
      : Object.entries(value as Record<string, unknown>);
    for (let i = entries.length - 1; i >= 0; i -= 1) {
      const [key, child] = entries[i]!;
      if (key.includes('\u0000')) return { path, kind: 'nul' };
      stack.push({ value: child, path: `${path}.${key}`, depth: depth + 1 });
    }
  }
  return undefined;
}
