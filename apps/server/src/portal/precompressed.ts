import type { Stats } from 'node:fs';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import type { NextFunction, Request, Response } from 'express';

/**
 * The encodings the portal's build writes next to each file (apps/portal/precompress.ts), in
 * the order preferred when the client accepts both equally: brotli is 15–20 % smaller than gzip.
 */
const ENCODINGS = [
  { name: 'br', suffix: '.br' },
  { name: 'gzip', suffix: '.gz' },
] as const;

type Encoding = (typeof ENCODINGS)[number];

/**
 * The client's weight (q) for each coding named in Accept-Encoding (RFC 9110 §12.5.3); `*`
 * stands for any coding not named. Absent header: no coding is acceptable but identity.
 */
export function acceptedEncodings(header: string | undefined): Map<string, number> {
  const weights = new Map<string, number>();
  for (const part of (header ?? '').split(',')) {
    const [coding, ...params] = part.split(';').map((s) => s.trim().toLowerCase());
    if (!coding) continue;
    let q = 1;
    for (const param of params) {
      const match = /^q\s*=\s*([0-9.]+)$/.exec(param);
      if (match) q = Math.min(1, Math.max(0, Number(match[1]) || 0));
    }
    weights.set(coding === 'x-gzip' ? 'gzip' : coding, q);
  }
  return weights;
}

/** The encodings worth trying for this request, best first (ties keep brotli ahead of gzip). */
function candidates(header: string | undefined): Encoding[] {
  const weights = acceptedEncodings(header);
  const weightOf = (name: string) => weights.get(name) ?? weights.get('*') ?? 0;
  return ENCODINGS.filter((e) => weightOf(e.name) > 0).sort(
    (a, b) => weightOf(b.name) - weightOf(a.name),
  );
}

/** The file's size and time when it is a regular file. */
async function fileStats(file: string): Promise<Stats | undefined> {
  try {
    const stats = await stat(file);
    return stats.isFile() ? stats : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Sends `file` (inside `root`) in the best encoding the client accepts that the build wrote
 * beside it (`file.br`, `file.gz`), else as it is. Nothing is compressed here: a request costs a
 * stat or two and a file read. Content-Type is the original file's; Content-Length and ETag are
 * those of the bytes sent (so each encoding has its own validator); `Vary: Accept-Encoding` on
 * every answer, since another client may get another encoding from the same URL. Calls
 * `notFound` when `file` is not a regular file inside `root`.
 */
export async function sendPrecompressed(
  req: Request,
  res: Response,
  next: NextFunction,
  options: { root: string; file: string; cacheControl: string; notFound: () => void },
): Promise<void> {
  const root = path.resolve(options.root);
  const file = path.resolve(root, options.file);
  // Dot files and anything outside the build (a `..` that survived decoding) are not served.
  const relative = path.relative(root, file);
  const inside =
    relative &&
    !relative.startsWith('..') &&
    !path.isAbsolute(relative) &&
    !relative.split(path.sep).some((segment) => segment.startsWith('.'));
  let stats = inside ? await fileStats(file) : undefined;
  if (!stats) return options.notFound();
  let chosen: string = file;
  let encoding: Encoding | undefined;
  for (const candidate of candidates(req.headers['accept-encoding'])) {
    const copy = await fileStats(file + candidate.suffix);
    if (copy) {
      [chosen, encoding, stats] = [file + candidate.suffix, candidate, copy];
      break;
    }
  }
  // The app turns Express's ETags off (the API sets its own); these are send's own weak ones
  // (size and time of the bytes sent), so a revalidation of the same encoding gets a 304.
  res.setHeader('ETag', `W/"${stats.size.toString(16)}-${stats.mtime.getTime().toString(16)}"`);
  res.setHeader('Vary', 'Accept-Encoding');
  res.setHeader('Cache-Control', options.cacheControl);
  // The type of what the bytes decode to, not of `.br`/`.gz` (send keeps one already set).
  res.type(path.extname(file) || 'application/octet-stream');
  if (encoding) res.setHeader('Content-Encoding', encoding.name);
  res.sendFile(
    path.relative(root, chosen),
    { root, dotfiles: 'deny', cacheControl: false },
    (e) => {
      if (e && !res.headersSent) next(e);
    },
  );
}

/** The request's path below the mount point, decoded; undefined when it does not decode. */
export function decodedPath(req: Request): string | undefined {
  try {
    const decoded = decodeURIComponent(req.path);
    return decoded.includes('\0') ? undefined : decoded;
  } catch {
    return undefined;
  }
}
