import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import type { Plugin, ResolvedConfig } from 'vite';

const brotli = promisify(brotliCompress);
const gzipAsync = promisify(gzip);

/** Text the server sends compressed; images, fonts and the like are compressed already. */
const COMPRESSIBLE = /\.(?:js|mjs|css|html|svg|json|txt|map|webmanifest|xml)$/;

/** Below this, a header and a framing byte or two save nothing worth a second file. */
const MIN_BYTES = 1024;

/**
 * Writes `name.br` (brotli, quality 11) and `name.gz` (gzip, level 9) beside every compressible
 * file of the build, once, so the server (apps/server/src/portal/precompressed.ts) sends the
 * copy a client accepts without compressing anything per request. A copy not smaller than the
 * file is not written; the server then sends the file as it is.
 *
 * Ours rather than a package (decision 25): node:zlib does both encodings; the packages that
 * do this (vite-plugin-compression and its forks) add dependencies for some thirty lines.
 */
export function precompress(): Plugin {
  let outDir = '';
  return {
    name: 'platform:precompress',
    apply: 'build',
    configResolved(config: ResolvedConfig) {
      outDir = path.resolve(config.root, config.build.outDir);
    },
    // After the bundle, index.html and the public files are all written.
    async closeBundle() {
      const files = await compressibleFiles(outDir);
      await Promise.all(files.map(writeCopies));
    },
  };
}

async function compressibleFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  const files = entries
    .filter((e) => e.isFile() && COMPRESSIBLE.test(e.name))
    .map((e) => path.join(e.parentPath, e.name));
  const sizes = await Promise.all(files.map(async (file) => (await stat(file)).size));
  return files.filter((_, i) => sizes[i]! >= MIN_BYTES);
}

async function writeCopies(file: string): Promise<void> {
  const content = await readFile(file);
  const [br, gz] = await Promise.all([
    brotli(content, {
      params: {
        [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY,
        [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
        [constants.BROTLI_PARAM_SIZE_HINT]: content.length,
      },
    }),
    gzipAsync(content, { level: constants.Z_BEST_COMPRESSION }),
  ]);
  if (br.length < content.length) await writeFile(`${file}.br`, br);
  if (gz.length < content.length) await writeFile(`${file}.gz`, gz);
}
