import { unescape } from 'node:querystring';
import type { NextFunction, Request, Response } from 'express';
import { ProblemException } from './problem.exception';

/**
 * Refuses, with a 400 naming where: JSON nested deeper than MAX_BODY_DEPTH; the NUL character
 * (U+0000) anywhere in a request's path, query or JSON body (PostgreSQL cannot store it in text:
 * a 500 that the contract fuzzer found); an unpaired UTF-16 surrogate (`"\ud800"`) in a body
 * string, which no database stores (it read back as U+FFFD and broke event consumers); and a
 * path or query whose percent-encoding is not UTF-8 (which would be read as U+FFFD). No field of
 * this API has a use for any of them, on either database.
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
  const badUrl = notUtf8InUrl(req.url);
  if (badUrl) {
    next(invalid(badUrl, 'must be valid UTF-8 once percent-decoded'));
    return;
  }
  const problem = findProblem(req.body as unknown);
  if (!problem) {
    next();
    return;
  }
  switch (problem.kind) {
    case 'nul':
      next(nulIn(problem.path));
      return;
    case 'surrogate':
      next(
        invalid(
          problem.path,
          'must be well-formed UTF-16: an unpaired surrogate (such as \\ud800 alone) is not a character',
        ),
      );
      return;
    case 'depth':
      next(tooDeep(problem.path));
      return;
  }
}

function tooDeep(path: string): ProblemException {
  const message = `must not nest objects and arrays more than ${MAX_BODY_DEPTH} levels deep`;
  return new ProblemException('validation_error', `body: ${message}`, {
    errors: [{ path, message, code: 'too_deep' }],
  });
}

function nulIn(path: string): ProblemException {
  return invalid(path, 'must not contain the NUL character (U+0000)');
}

function invalid(path: string, message: string): ProblemException {
  return new ProblemException('validation_error', `${path}: ${message}`, {
    errors: [{ path, message, code: 'invalid_string' }],
  });
}

/** No request body of this API nests deeper; deeper JSON is refused before anything walks it. */
export const MAX_BODY_DEPTH = 32;

/**
 * `path`, or `query.<name>` of the first parameter, whose percent-encoded bytes are not UTF-8
 * (an encoded surrogate such as %ED%A0%80 included); undefined if none. A `%` not followed by
 * two hex digits is a literal, as the query parser reads it.
 */
function notUtf8InUrl(url: string): string | undefined {
  const [path = '', query] = splitOnce(url, '?');
  if (!decodesToUtf8(path)) return 'path';
  for (const pair of query?.split('&') ?? []) {
    if (decodesToUtf8(pair)) continue;
    const [name = ''] = splitOnce(pair, '=');
    // Node's own lenient decoder names it (its bad bytes as U+FFFD), as the query parser would.
    return `query.${unescape(name).slice(0, 100)}`;
  }
  return undefined;
}

function splitOnce(value: string, separator: string): [string, string | undefined] {
  const at = value.indexOf(separator);
  return at < 0 ? [value, undefined] : [value.slice(0, at), value.slice(at + 1)];
}

function decodesToUtf8(raw: string): boolean {
  try {
    // decodeURIComponent throws URIError exactly when the bytes are not UTF-8.
    decodeURIComponent(raw.replace(/%(?![0-9a-fA-F]{2})/g, '%25'));
    return true;
  } catch {
    return false;
  }
}

type BodyProblem = { path: string; kind: 'nul' | 'surrogate' | 'depth' };

/** Which rule a string (or key) breaks, if any. */
function stringProblem(value: string): 'nul' | 'surrogate' | undefined {
  if (value.includes('\u0000')) return 'nul';
  if (!(value as WellFormedString).isWellFormed()) return 'surrogate';
  return undefined;
}

/** `String.prototype.isWellFormed` (Node 20, ES2024), which the ES2023 typings lack. */
type WellFormedString = string & { isWellFormed(): boolean };

/**
 * The path of the first string (or key) holding a NUL or an unpaired surrogate, or of a value
 * nested deeper than MAX_BODY_DEPTH; undefined if none. Iterative, so hostile nesting cannot
 * exhaust the stack.
 */
function findProblem(body: unknown): BodyProblem | undefined {
  const stack: { value: unknown; path: string; depth: number }[] = [
    { value: body, path: 'body', depth: 0 },
  ];
  while (stack.length > 0) {
    const { value, path, depth } = stack.pop()!;
    if (typeof value === 'string') {
      const kind = stringProblem(value);
      if (kind) return { path, kind };
      continue;
    }
    if (!value || typeof value !== 'object') continue;
    if (depth >= MAX_BODY_DEPTH) return { path, kind: 'depth' };
    const entries: [string, unknown][] = Array.isArray(value)
      ? (value as unknown[]).map((child, i): [string, unknown] => [String(i), child])
      : Object.entries(value as Record<string, unknown>);
    for (let i = entries.length - 1; i >= 0; i -= 1) {
      const [key, child] = entries[i]!;
      const kind = stringProblem(key);
      if (kind) return { path, kind };
      stack.push({ value: child, path: `${path}.${key}`, depth: depth + 1 });
    }
  }
  return undefined;
}
