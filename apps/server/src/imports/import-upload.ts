import { IMPORT_MAX_BYTES, type ImportFormat } from '@platform/contract';
import busboy from 'busboy';
import type { Request } from 'express';
import type { Readable } from 'node:stream';
import { ProblemException } from '../common/problem.exception';

/** The file part of an import's body, as it streams in. */
export interface FilePart {
  stream: Readable;
  mimeType: string;
  filename: string | undefined;
}

/**
 * Reads the request's one file part with `use` as it arrives. Anything else in the body (a form
 * field, a second file) is refused: an import's options go in the query. A file past
 * IMPORT_MAX_BYTES is a 413.
 */
export function receiveFile<T>(req: Request, use: (part: FilePart) => Promise<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    let work: Promise<T> | undefined;
    // Refused at once; the rest of the body is drained so the answer can be read.
    const refuse = (error: unknown) => {
      req.unpipe(parts);
      req.resume();
      reject(asError(error));
    };
    let parts: ReturnType<typeof busboy>;
    try {
      parts = busboy({ headers: req.headers, limits: { fileSize: IMPORT_MAX_BYTES } });
    } catch (error) {
      // A multipart Content-Type without its boundary.
      reject(unreadable(asError(error)));
      return;
    }
    parts.on('file', (name, stream, info) => {
      if (name !== 'file' || work) {
        stream.resume();
        refuse(unexpectedPart(name, work !== undefined));
        return;
      }
      let truncated = false;
      stream.once('limit', () => {
        truncated = true;
        stream.destroy(tooLarge());
      });
      work = Promise.resolve()
        .then(() => use({ stream, mimeType: info.mimeType, filename: info.filename }))
        .then(
          (value) => {
            if (truncated) throw tooLarge();
            return value;
          },
          (error: unknown) => {
            stream.resume();
            throw truncated ? tooLarge() : error;
          },
        );
      work.catch(refuse);
    });
    parts.on('field', (name) => refuse(unexpectedPart(name, false)));
    parts.on('error', (error: Error) => refuse(unreadable(error)));
    parts.on('close', () => {
      if (work) work.then(resolve, reject);
      else reject(noFilePart());
    });
    req.on('error', reject);
    req.pipe(parts);
  });
}

/** The file's format from its part's Content-Type or name, when the query does not say. */
export function formatOf(mimeType: string, filename: string | undefined): ImportFormat {
  const name = filename ?? '';
  if (/^text\/csv\b/.test(mimeType) || /\.csv$/i.test(name)) return 'csv';
  if (/ndjson|jsonl|json-seq/.test(mimeType) || /\.(ndjson|jsonl)$/i.test(name)) return 'ndjson';
  if (/^application\/(x-)?zip/.test(mimeType) || /\.zip$/i.test(name)) return 'oneroster';
  throw new ProblemException(
    'validation_error',
    `Cannot tell the file's format from its type '${mimeType}' or name; send format=csv, format=ndjson or format=oneroster`,
    { errors: [{ path: 'query.format', message: 'Required', code: 'invalid_type' }] },
  );
}

function unexpectedPart(name: string, another: boolean): ProblemException {
  const detail = another
    ? "An import takes one file: the body has a second part named 'file'"
    : `The body has a part named '${name}': an import's body is one part named 'file', and its options go in the query (?collection=students&mode=full)`;
  return new ProblemException('validation_error', detail, {
    errors: [{ path: `body.${name}`, message: 'is not taken', code: 'unknown_parameter' }],
  });
}

function noFilePart(): ProblemException {
  return new ProblemException('validation_error', "The body has no part named 'file'", {
    errors: [{ path: 'body.file', message: 'Required', code: 'invalid_type' }],
  });
}

function unreadable(error: Error): ProblemException {
  return new ProblemException(
    'validation_error',
    `The multipart body cannot be read: ${error.message}`,
  );
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

function tooLarge(): ProblemException {
  return new ProblemException(
    'payload_too_large',
    `An import's file is at most ${IMPORT_MAX_BYTES / 1024 / 1024} MB; split it`,
  );
}
