import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { brotliCompressSync, brotliDecompressSync, gunzipSync, gzipSync } from 'node:zlib';
import { startServer, type TestServer } from './support/server';

interface Raw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/**
 * The bytes on the wire, undecoded (fetch would decode them and hide what was sent). The path
 * goes out as written: a URL object would resolve a `%2e%2e` segment before sending it.
 */
function raw(origin: string, rawPath: string, headers: Record<string, string>): Promise<Raw> {
  const { hostname, port } = new URL(origin);
  return new Promise((resolve, reject) => {
    request({ hostname, port, path: rawPath, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }),
      );
      res.on('error', reject);
    })
      .on('error', reject)
      .end();
  });
}

/** What the client reads once it undoes the Content-Encoding. */
function decoded(res: Raw): string {
  const encoding = res.headers['content-encoding'];
  if (encoding === 'br') return brotliDecompressSync(res.body).toString();
  if (encoding === 'gzip') return gunzipSync(res.body).toString();
  expect(encoding).toBeUndefined();
  return res.body.toString();
}

/**
 * The portal's build writes a brotli and a gzip copy beside each file (apps/portal/precompress.ts);
 * the server sends the one the client accepts, else the file as it is, and never compresses on
 * its own. The fixture build here has both copies for the script and index.html, only gzip for
 * the style sheet, and none for the icon.
 */
describe('the portal: precompressed assets', () => {
  let server: TestServer;
  let dist: string;
  const script = `console.log(${JSON.stringify('the portal '.repeat(200))});`;
  const style = `body { color: black; } ${'.x { margin: 0 } '.repeat(100)}`;
  const html =
    '<!doctype html><title>portal</title><script type="module" src="/portal/assets/index-AbC123.js"></script>';

  function write(file: string, content: string, encodings: ('br' | 'gz')[]): void {
    writeFileSync(path.join(dist, file), content);
    if (encodings.includes('br'))
      writeFileSync(path.join(dist, `${file}.br`), brotliCompressSync(content));
    if (encodings.includes('gz')) writeFileSync(path.join(dist, `${file}.gz`), gzipSync(content));
  }
  const sizeOf = (file: string) => statSync(path.join(dist, file)).size;
  const get = (route: string, headers: Record<string, string> = {}) =>
    raw(server.url, `/portal${route}`, headers);

  beforeAll(async () => {
    dist = mkdtempSync(path.join(tmpdir(), 'portal-dist-'));
    mkdirSync(path.join(dist, 'assets'));
    write('index.html', html, ['br', 'gz']);
    write('assets/index-AbC123.js', script, ['br', 'gz']);
    write('assets/index-DeF456.css', style, ['gz']);
    write('favicon.svg', '<svg xmlns="http://www.w3.org/2000/svg"/>', []);
    server = await startServer({ PORTAL_DIST_DIR: dist });
  });

  afterAll(async () => {
    await server.close();
    rmSync(dist, { recursive: true, force: true });
  });

  it('sends brotli when the client accepts it, with the length, type and caching of that copy', async () => {
    const res = await get('/assets/index-AbC123.js', {
      'Accept-Encoding': 'gzip, deflate, br, zstd',
    });
    expect(res.status).toBe(200);
    expect(res.headers['content-encoding']).toBe('br');
    expect(res.headers['content-type']).toMatch(/javascript/);
    expect(Number(res.headers['content-length'])).toBe(sizeOf('assets/index-AbC123.js.br'));
    expect(res.body.length).toBeLessThan(script.length / 5);
    expect(decoded(res)).toBe(script);
    expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(res.headers.vary).toBe('Accept-Encoding');
  });

  it('falls back to gzip: when brotli is not accepted, or the build wrote no brotli copy', async () => {
    const js = await get('/assets/index-AbC123.js', { 'Accept-Encoding': 'gzip, deflate' });
    expect(js.headers['content-encoding']).toBe('gzip');
    expect(Number(js.headers['content-length'])).toBe(sizeOf('assets/index-AbC123.js.gz'));
    expect(decoded(js)).toBe(script);
    const css = await get('/assets/index-DeF456.css', { 'Accept-Encoding': 'br, gzip' });
    expect(css.headers['content-encoding']).toBe('gzip');
    expect(css.headers['content-type']).toMatch(/^text\/css/);
    expect(decoded(css)).toBe(style);
  });

  it('sends the file as it is when the client accepts neither, or nothing was precompressed', async () => {
    for (const accept of [undefined, 'identity', 'deflate', 'zstd']) {
      const res = await get('/assets/index-AbC123.js', accept ? { 'Accept-Encoding': accept } : {});
      expect({ accept, encoding: res.headers['content-encoding'] }).toEqual({
        accept,
        encoding: undefined,
      });
      expect(Number(res.headers['content-length'])).toBe(script.length);
      expect(res.body.toString()).toBe(script);
      expect(res.headers.vary).toBe('Accept-Encoding');
    }
    const icon = await get('/favicon.svg', { 'Accept-Encoding': 'br, gzip' });
    expect(icon.status).toBe(200);
    expect(icon.headers['content-encoding']).toBeUndefined();
    expect(icon.headers['content-type']).toMatch(/^image\/svg\+xml/);
    expect(icon.headers['cache-control']).toBe('public, max-age=300');
  });

  it('respects q=0 and the weights the client gives', async () => {
    const cases: [string, string | undefined][] = [
      ['br;q=0, gzip', 'gzip'],
      ['br;q=0, gzip;q=0', undefined],
      ['*;q=0', undefined],
      ['*', 'br'],
      ['gzip, *;q=0', 'gzip'],
      ['gzip;q=1, br;q=0.5', 'gzip'],
      ['gzip;q=0.8, br', 'br'],
    ];
    for (const [accept, expected] of cases) {
      const res = await get('/assets/index-AbC123.js', { 'Accept-Encoding': accept });
      expect({ accept, encoding: res.headers['content-encoding'] }).toEqual({
        accept,
        encoding: expected,
      });
      expect(decoded(res)).toBe(script);
    }
  });

  it('gives each encoding its own ETag, and answers a matching revalidation with 304', async () => {
    const br = await get('/assets/index-AbC123.js', { 'Accept-Encoding': 'br' });
    const gzip = await get('/assets/index-AbC123.js', { 'Accept-Encoding': 'gzip' });
    const plain = await get('/assets/index-AbC123.js');
    const tags = [br, gzip, plain].map((res) => res.headers.etag);
    expect(new Set(tags).size).toBe(3);
    const again = await get('/assets/index-AbC123.js', {
      'Accept-Encoding': 'br',
      'If-None-Match': String(br.headers.etag),
    });
    expect(again.status).toBe(304);
    expect(again.body.length).toBe(0);
  });

  it('compresses the page (index.html) too, revalidated each time, under the same CSP', async () => {
    const plain = await get('/tokens');
    for (const route of ['/', '/tokens', '/webhooks/whe_1']) {
      const res = await get(route, { 'Accept-Encoding': 'gzip, br' });
      expect({ route, status: res.status }).toEqual({ route, status: 200 });
      expect(res.headers['content-encoding']).toBe('br');
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.headers['cache-control']).toBe('no-cache');
      expect(res.headers.vary).toBe('Accept-Encoding');
      expect(res.headers['content-security-policy']).toBe(plain.headers['content-security-policy']);
      expect(decoded(res)).toBe(html);
    }
    const csp = String(plain.headers['content-security-policy']);
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
  });

  it('still answers 404 for a missing asset, its copies, and paths outside the build', async () => {
    for (const route of [
      '/assets/index-Gone99.js',
      '/assets/index-Gone99.js.br',
      '/assets/..%2Findex.html',
      '/assets/%2e%2e/index.html',
      '/assets/',
    ]) {
      const res = await get(route, { 'Accept-Encoding': 'br, gzip' });
      expect({ route, status: res.status }).toEqual({ route, status: 404 });
      expect(res.headers['content-encoding']).toBeUndefined();
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.body.toString()).not.toContain('<title>portal</title>');
    }
  });
});
